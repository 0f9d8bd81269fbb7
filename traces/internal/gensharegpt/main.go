// Command gensharegpt writes examples/sharegpt-like.csv, the synthetic
// ShareGPT-like workload (traces.ShareGPTLike), in the SplitwiseSim trace
// format. Run by go generate in package traces.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"splitplan/internal/gendata"
	"splitplan/traces"
)

func main() {
	out := flag.String("out", "../examples/sharegpt-like.csv", "trace file to write")
	flag.Parse()
	var b bytes.Buffer
	if err := traces.WriteSplitwise(&b, traces.ShareGPTLike(traces.ShareGPTRequests, traces.ShareGPTSeed)); err != nil {
		fmt.Fprintln(os.Stderr, "gensharegpt:", err)
		os.Exit(1)
	}
	if err := gendata.WriteFile(*out, b.Bytes()); err != nil {
		fmt.Fprintln(os.Stderr, "gensharegpt:", err)
		os.Exit(1)
	}
}
