package cli

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"splitplan/evaluator"
	"splitplan/report"
	"splitplan/report/htmlreport"
	"splitplan/resolve"
	"splitplan/search"
)

// reportFlag is --report, the self-contained HTML report of optimize,
// sweep, evaluate and simulate.
func reportFlag() cli.Flag {
	return &cli.StringFlag{Name: "report", Usage: "write one self-contained, interactive HTML report (the question, the answer, the tables as the CSVs hold them, the figures; no network needed to view it) to `FILE` (.html)"}
}

// checkReport checks --report before any work: a file name ending in
// .html or .htm, not standard output, whose directory takes new files.
func checkReport(c *cli.Context) error {
	path := c.String("report")
	if path == "" && !isSet(c, "report") {
		return nil
	}
	if isStdout(path) {
		return badInputf("--report %s: the HTML report goes to a file (FILE.html), not standard output", path)
	}
	if low := strings.ToLower(path); !strings.HasSuffix(low, ".html") && !strings.HasSuffix(low, ".htm") {
		return badInputf("--report %s: expected a file name ending in .html", path)
	}
	if _, err := resolveOutput(path); err != nil {
		return badInputf("--report %s: %v", path, err)
	}
	return nil
}

// commandLine is the command line that reproduces c's run: the command's
// name, then every flag set, in the order of the command's flags, its value
// quoted for a POSIX shell where it needs it.
func commandLine(c *cli.Context) string {
	parts := []string{c.App.Name, c.Command.Name}
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		if name == "help" || !isSet(c, name) {
			continue
		}
		var vals []string
		switch v := c.Value(name).(type) {
		case bool:
			if v {
				parts = append(parts, "--"+name)
			} else {
				parts = append(parts, "--"+name+"=false")
			}
			continue
		case cli.StringSlice:
			vals = v.Value()
		case *cli.StringSlice:
			vals = v.Value()
		case []string:
			vals = v
		default:
			vals = []string{fmt.Sprint(v)}
		}
		flag := "--" + name
		if len(name) == 1 {
			flag = "-" + name
		}
		for _, s := range vals {
			parts = append(parts, flag, shellQuote(s))
		}
	}
	return strings.Join(parts, " ")
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and -_.,:/+=@%.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.,:/+=@%", r)) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}

// reportMeta is what a report says of the run: its command line and the
// build's version.
func reportMeta(c *cli.Context) htmlreport.Meta {
	return htmlreport.Meta{Command: commandLine(c), Version: c.App.Version}
}

// writeReport builds and writes --report, when set, through a temporary
// file renamed over it (writeOutput): an interrupted run leaves none.
func writeReport(c *cli.Context, build func() (*htmlreport.Report, error)) error {
	path := c.String("report")
	if path == "" {
		return nil
	}
	r, err := build()
	if err != nil {
		return err
	}
	if err := writeOutput(c.Context, path, c.App.Writer, r.Write); err != nil {
		return err
	}
	return nil
}

// optimizeReport writes optimize's --report.
func optimizeReport(c *cli.Context, res *search.Result, p *search.Problem) error {
	return writeReport(c, func() (*htmlreport.Report, error) { return htmlreport.Optimize(res, p, reportMeta(c)) })
}

// loadReport writes sweep's and evaluate's --report.
func loadReport(c *cli.Context, ld *loadRun, rows []search.LoadRow, title string) error {
	return writeReport(c, func() (*htmlreport.Report, error) {
		q := []htmlreport.Field{
			{Label: "workload", Text: fmt.Sprintf("%s sizes, %gs per rate, seed %d", ld.Workload.Sizes.Name(), ld.Workload.DurationS, ld.Workload.Seed)},
			{Label: "model", Text: ld.Model},
			{Label: "reference", Text: "slowdowns against " + ld.RefName},
		}
		var names []string
		for _, cl := range ld.Clusters {
			names = append(names, fmt.Sprintf("%s (%.1f $/h, %.1f kW)", cl, cl.CostUSDPerH(), cl.PowerKW()))
		}
		q = append(q, htmlreport.Field{Label: "clusters", Text: strings.Join(names, "; ")})
		rates := append([]float64(nil), ld.Rates...)
		sort.Float64s(rates)
		var rs []string
		for _, r := range rates {
			rs = append(rs, fmt.Sprint(r))
		}
		q = append(q, htmlreport.Field{Label: "rates", Text: strings.Join(rs, ", ") + " req/s"})
		for _, cl := range ld.Clusters {
			q = append(q, htmlreport.Field{Label: "perf", Text: fmt.Sprintf("%s: %s", cl, cl.Provenance())})
		}
		for _, n := range ld.Notes {
			q = append(q, htmlreport.Field{Label: "note", Text: n})
		}
		if line := report.LoadScenariosText(rows, ld.Workload, ld.VerifyS, ld.scenarioSims); line != "" {
			q = append(q, htmlreport.Field{Label: "scenarios", Text: line})
		}
		return htmlreport.Load(c.Command.Name, q, rows, ld.SLO, title, reportMeta(c))
	})
}

// simulateReport writes simulate's --report; its question is the
// command's printed report (without its timing).
func simulateReport(c *cli.Context, cl resolve.Cluster, wl *workload, opt evaluator.Options, res *evaluator.Result) error {
	return writeReport(c, func() (*htmlreport.Report, error) {
		var text bytes.Buffer
		report.PrintSimulation(&text, cl, wl.Source, wl.Varying, opt, wl.Requests, res, 0)
		return htmlreport.Simulate(cl, res, text.String(), reportMeta(c))
	})
}
