package main

import (
	"splitplan/report"

	"github.com/urfave/cli/v2"
)

// planFlag is the --plan flag shared by every command that uses the catalog.
var planFlag = &cli.StringFlag{Name: "plan", Usage: "TOML plan `FILE` overriding or adding machine types, models, designs and performance profiles"}

func catalogCommand() *cli.Command {
	return &cli.Command{
		Name:  "catalog",
		Usage: "print the machine types, models and designs (built in, or changed by --plan)",
		Flags: []cli.Flag{planFlag},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			p, err := loadPlan(c.String("plan"))
			if err != nil {
				return err
			}
			return report.PrintCatalog(c.App.Writer, p.Catalog, p.Perf)
		},
	}
}
