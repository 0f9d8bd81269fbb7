// Command splitplan sizes LLM inference clusters: it simulates candidate
// clusters of prompt and token machines with a profiled performance model
// and searches for the cheapest, leanest or fastest design that meets the
// latency SLOs. See README.md; the commands live in package cli.
package main

import (
	"os"

	"splitplan/cli"
)

//go:generate go test ./cli/ -run ^TestCLIGoldenDocs$ -update

func main() { os.Exit(cli.Main()) }
