package cli

import (
	"strconv"

	"splitplan/memory"
	"splitplan/report"

	"github.com/urfave/cli/v2"
)

// planFlag is the --plan flag shared by every command that uses the catalog.
var planFlag = &cli.StringFlag{Name: "plan", Usage: "TOML plan `FILE` overriding or adding machine types, models, designs and performance profiles"}

// memoryUtilizationFlag is the serving engine's share of each GPU's
// memory, for every machine type (a plan's [[machine]] key
// gpu_memory_utilization sets it per type).
var memoryUtilizationFlag = &cli.Float64Flag{Name: "gpu-memory-utilization", DefaultText: strconv.FormatFloat(memory.DefaultUtilization, 'g', -1, 64),
	Usage: "`FRACTION` of each GPU's memory the serving engine may use for weights, activations and KV cache (vLLM's gpu_memory_utilization) on every machine type"}

func catalogCommand() *cli.Command {
	return &cli.Command{
		Name:  "catalog",
		Usage: "print the machine types, models and designs (built in, or changed by --plan)",
		Flags: []cli.Flag{planFlag, memoryUtilizationFlag},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			p, err := planFrom(c)
			if err != nil {
				return err
			}
			return report.PrintCatalog(c.App.Writer, p.Catalog, p.Perf)
		},
	}
}
