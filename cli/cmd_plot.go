package cli

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"splitplan/evaluator"
	"splitplan/plots"
	"splitplan/report"
	"splitplan/search"
)

func plotCommand() *cli.Command {
	return &cli.Command{
		Name:  "plot",
		Usage: "draw figures (PNG or SVG, by the --out extension) from saved CSVs or from a run made here",
		Subcommands: []*cli.Command{
			plotHeatmapCommand(), plotParetoCommand(), plotSummaryCommand(), plotCDFCommand(), plotLatencyCommand(),
			plotStudyCommand(), plotStudyWinnersCommand(),
		},
	}
}

// outFlag is the figure path of every plot subcommand.
func outFlag() cli.Flag {
	return &cli.StringFlag{Name: "out", Usage: "figure `FILE`: .png or .svg", Required: true}
}

// checkOut validates --out before any work.
func checkOut(c *cli.Context) (string, error) {
	path := c.String("out")
	if err := checkFigureOutput(c, "out"); err != nil {
		return "", err
	}
	return path, nil
}

// runSearch runs the search the optimize flags describe, with fallback
// as the goal when none is given and, when designs is not nil, only those
// designs.
func runSearch(c *cli.Context, fallback *optimizeConfig, designs []string) (*search.Result, *search.Problem, error) {
	p, err := searchFrom(c, fallback, designs)
	if err != nil {
		return nil, nil, err
	}
	prog := newProgress(c.App.ErrWriter)
	p.Progress = prog.update
	res, err := search.Run(c.Context, p)
	prog.done()
	if err != nil {
		return nil, nil, explainSearchError(err, p)
	}
	return res, p, nil
}

// drawn reports a figure written, or the plots error as the CLI answers it.
func drawn(c *cli.Context, path string, err error) error {
	if err != nil {
		return plotError("--out", err, c.App.Writer)
	}
	fmt.Fprintf(c.App.Writer, "wrote %s\n", path)
	return nil
}

func plotHeatmapCommand() *cli.Command {
	flags := append([]cli.Flag{
		&cli.StringFlag{Name: "points", Usage: "points CSV `FILE` written by optimize --points (else the search runs here)"},
		&cli.StringFlag{Name: "optima", Usage: "optima CSV `FILE` written by optimize --out: stars its optimum of the design"},
		&cli.StringFlag{Name: "design", Usage: "the design to draw, e.g. HH or Splitwise-HA", Required: true},
		&cli.StringFlag{Name: "color", Usage: "colour of feasible points: slo (binding SLO, measured / limit), cost ($/h) or capacity (req/s; points at several rates)"},
		outFlag(),
	}, searchFlags()...)
	return &cli.Command{
		Name:  "heatmap",
		Usage: "the design space of one design: prompt × token machines, feasible points coloured, the optimum starred",
		UsageText: "splitplan plot heatmap --points points.csv --design HH [--rps 70] --out heatmap.svg\n" +
			"splitplan plot heatmap --design HH --goal cost --rps 70 [--exhaustive] --out heatmap.png",
		Flags:  flags,
		Action: plotHeatmap,
	}
}

func plotHeatmap(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	out, err := checkOut(c)
	if err != nil {
		return err
	}
	color := strings.ToLower(c.String("color"))
	switch color {
	case "", report.ColorSLO, report.ColorCost, report.ColorCapacity:
	default:
		return badInputf("--color must be slo, cost or capacity, got %q", c.String("color"))
	}
	pl, err := planFrom(c)
	if err != nil {
		return err
	}
	design := c.String("design")
	in := report.HeatmapInput{Design: design, RPS: math.NaN(), Color: color}
	if path := c.String("points"); path != "" {
		for _, fl := range []string{"goal", "cost-budget", "power-budget", "exhaustive"} {
			if isSet(c, fl) {
				return badInputf("--%s asks for a search, which --points replaces: the figure draws the file's points (drop --%s, or --points to search here)", fl, fl)
			}
		}
		// The points' design as the catalog names it, when it knows it.
		known := false
		if d, err := pl.Catalog.ResolveDesign(design); err == nil {
			in.Design, in.Baseline, known = d.Name, d.IsBaseline(), true
		}
		if err := heatmapFromPoints(c, &in, path, known); err != nil {
			return err
		}
	} else {
		// The search resolves the name, with its policy suffix, once
		// (designSpec); the figure takes the design from its result.
		if isSet(c, "optima") {
			return badInputf("--optima goes with --points (a search run here stars its own optimum)")
		}
		if isSet(c, "designs") {
			return badInputf("plot heatmap draws one design: give --design, not --designs")
		}
		res, p, err := runSearch(c, &optimizeConfig{Goal: search.GoalCost.String(), workloadConfig: workloadConfig{RPS: 70}}, []string{design})
		if err != nil {
			return err
		}
		d := res.Designs[0]
		in.Design, in.Baseline, in.Points, in.GridPoints, in.Exhaustive = d.Design, d.Baseline, report.PointsOf(res), d.GridPoints, p.Exhaustive
		opt := report.OptimaOf(res)[0]
		in.Optimum = &opt
		if res.Goal.NeedsRate() {
			in.RPS = res.RateRPS
		}
		in.Source = fmt.Sprintf("%s; %s, %s request sizes, %gs per simulation, seed %d", report.GoalTitle(res), p.Model, p.Workload.Sizes.Name(), p.Workload.DurationS, p.Workload.Seed)
		if len(in.Points) == 0 {
			fmt.Fprintf(c.App.Writer, "no figure: the search simulated no point of %s (every point was pruned)\n", d.Design)
			return nil
		}
	}
	f, err := report.HeatmapFigure(in)
	if err != nil {
		return err
	}
	return drawn(c, out, plots.Heatmap(out, f))
}

// heatmapFromPoints fills in the points of a --points CSV for in.Design,
// and its optimum from --optima when given.
func heatmapFromPoints(c *cli.Context, in *report.HeatmapInput, path string, known bool) error {
	design := in.Design
	var err error
	if in.Points, err = report.ReadPointsCSV(path); err != nil {
		return err
	}
	if len(in.Points) == 0 {
		return badInputf("%s: no points: the file has a header only", path)
	}
	if !known { // a design of another plan: the points say (a baseline has no token pool)
		in.Baseline = true
		for _, p := range in.Points {
			in.Baseline = in.Baseline && (!strings.EqualFold(p.Design, design) || p.Token == 0)
		}
	}
	if isSet(c, "rps") {
		in.RPS = c.Float64("rps")
	}
	in.Source = filepath.Base(path)
	if op := c.String("optima"); op != "" {
		optima, err := report.ReadOptimaCSV(op)
		if err != nil {
			return err
		}
		for i := range optima {
			if strings.EqualFold(optima[i].Design, design) {
				in.Optimum = &optima[i]
			}
		}
		if in.Optimum == nil {
			return badInputf("--optima %s: no row of design %s, whose optimum the figure would star", op, design)
		}
	}
	return nil
}

func plotParetoCommand() *cli.Command {
	flags := append([]cli.Flag{
		&cli.StringSliceFlag{Name: "points", Usage: "points CSV `FILE`s written by optimize --points (comma-separated or repeated)"},
		&cli.StringSliceFlag{Name: "optima", Usage: "optima CSV `FILE`s written by optimize --out: their optima are labelled (alone, they are the points)"},
		&cli.StringFlag{Name: "y", Value: "cost", Usage: "y axis: cost ($/h) or power (kW)"},
		outFlag(),
	}, searchFlags()...)
	return &cli.Command{
		Name:  "pareto",
		Usage: "cost or power against throughput for every evaluated point of every design, with Pareto frontiers",
		UsageText: "splitplan plot pareto --points points.csv [--optima optima.csv] [--y power] --out pareto.svg\n" +
			"splitplan plot pareto --optima iso-power.csv,iso-cost.csv --out pareto.png\n" +
			"splitplan plot pareto --goal throughput --power-budget 455 --out pareto.png",
		Flags:  flags,
		Action: plotPareto,
	}
}

func plotPareto(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	out, err := checkOut(c)
	if err != nil {
		return err
	}
	yPower := false
	switch strings.ToLower(c.String("y")) {
	case "cost":
	case "power":
		yPower = true
	default:
		return badInputf("--y must be cost or power, got %q", c.String("y"))
	}
	var points []report.PointRec
	var optima [][]report.OptimumRec
	var sources []string
	for _, path := range c.StringSlice("points") {
		pts, err := report.ReadPointsCSV(path)
		if err != nil {
			return err
		}
		points = append(points, pts...)
		sources = append(sources, filepath.Base(path))
	}
	for _, path := range c.StringSlice("optima") {
		o, err := report.ReadOptimaCSV(path)
		if err != nil {
			return err
		}
		optima = append(optima, o)
		sources = append(sources, filepath.Base(path))
	}
	source := strings.Join(sources, ", ")
	if len(sources) == 0 {
		res, p, err := runSearch(c, &optimizeConfig{Goal: search.GoalThroughput.String(), PowerBudgetKW: 455}, nil)
		if err != nil {
			return err
		}
		points, optima = report.PointsOf(res), [][]report.OptimumRec{report.OptimaOf(res)}
		source = fmt.Sprintf("%s; %s, %s request sizes, %gs per simulation, seed %d", report.GoalTitle(res), p.Model, p.Workload.Sizes.Name(), p.Workload.DurationS, p.Workload.Seed)
		if !isSet(c, "y") && res.PowerBudgetKW > 0 {
			yPower = true
		}
	}
	if len(points) == 0 && len(optima) > 0 {
		total := 0
		for _, o := range optima {
			total += len(o)
		}
		if total == 0 {
			return badInputf("--optima: no designs in %s", source)
		}
	}
	f := report.ParetoFigure(points, optima, yPower, source)
	if len(f.Points) == 0 {
		if len(points) == 0 && len(optima) == 0 {
			return badInputf("--points: no points in %s", source)
		}
		fmt.Fprintf(c.App.Writer, "no figure: no feasible point in %s: every point fails an SLO\n", source)
		return nil
	}
	return drawn(c, out, plots.Pareto(out, f))
}

func plotSummaryCommand() *cli.Command {
	flags := append([]cli.Flag{
		&cli.StringSliceFlag{Name: "optima", Usage: "optima CSV `FILE`s written by optimize --out, one panel each (comma-separated or repeated)"},
		&cli.StringFlag{Name: "baseline", Value: report.PreferredBaseline, Usage: "design every bar is normalized to"},
		outFlag(),
	}, searchFlags()...)
	return &cli.Command{
		Name:  "summary",
		Usage: "grouped bars of throughput, cost, power and machines per design, normalized to a baseline",
		UsageText: "splitplan plot summary --optima iso-power.csv,iso-cost.csv,iso-throughput.csv [--baseline Baseline-H100] --out summary.png\n" +
			"splitplan plot summary --goal cost --rps 70 --out summary.svg",
		Flags:  flags,
		Action: plotSummary,
	}
}

func plotSummary(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	out, err := checkOut(c)
	if err != nil {
		return err
	}
	pl, err := planFrom(c)
	if err != nil {
		return err
	}
	baseline := c.String("baseline")
	if d, err := pl.Catalog.ResolveDesign(baseline); err == nil {
		baseline = d.Name
	}
	var sets []report.NamedOptima
	for _, path := range c.StringSlice("optima") {
		o, err := report.ReadOptimaCSV(path)
		if err != nil {
			return err
		}
		title := filepath.Base(path)
		if len(o) > 0 {
			title += " (goal " + o[0].Goal + ")"
		}
		sets = append(sets, report.NamedOptima{Title: title, Optima: o})
	}
	if len(sets) == 0 {
		res, _, err := runSearch(c, &optimizeConfig{Goal: search.GoalCost.String(), workloadConfig: workloadConfig{RPS: 70}}, nil)
		if err != nil {
			return err
		}
		sets = append(sets, report.NamedOptima{Title: report.GoalTitle(res), Optima: report.OptimaOf(res)})
	}
	if !isSet(c, "baseline") {
		baseline = report.DefaultBaseline(sets, baseline)
	}
	f, err := report.SummaryFigure(sets, baseline)
	if err != nil {
		return plotError("--optima", err, c.App.Writer)
	}
	return drawn(c, out, plots.Summary(out, f))
}

func plotCDFCommand() *cli.Command {
	flags := append(clusterFlags(), workloadFlags(70)...)
	flags = append(flags, outFlag(),
		&cli.StringFlag{Name: "of", Value: "batches", Usage: "what to draw: batches (busy time over the batched tokens of each iteration, per machine role) or gaps (every gap between tokens, the ITL, and each request's longest, its stall)"})
	return &cli.Command{
		Name:      "cdf",
		Usage:     "CDF of busy time over the batched tokens of each iteration per machine role, or of the gaps between tokens (--of gaps), from a simulation run here",
		UsageText: "splitplan plot cdf --design HH --prompt 35 --token 5 --rps 70 [--workload conversation] [--of gaps] --out cdf.png",
		Flags:     flags,
		Action:    plotCDF,
	}
}

func plotCDF(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	out, err := checkOut(c)
	if err != nil {
		return err
	}
	of := strings.ToLower(c.String("of"))
	if of != "batches" && of != "gaps" {
		return badInputf("--of %q: expected batches or gaps", c.String("of"))
	}
	pl, err := planFrom(c)
	if err != nil {
		return err
	}
	cl, opt, err := clusterFromFlags(c, pl)
	if err != nil {
		return err
	}
	wl, err := loadWorkload(c, opt.Compat)
	if err != nil {
		return err
	}
	opt.RecordBatchTokens = of == "batches" // the figure draws it
	opt.LatenciesOnly = of == "gaps"        // (the gaps' figure reads no more)
	prog, update := simulationProgress(c.App.ErrWriter, "plot cdf", wl.Requests)
	opt.Progress = update
	res, err := evaluator.EvaluateContext(c.Context, cl.Sim(), wl.Requests, opt)
	prog.done()
	if err != nil {
		return wl.explain(err)
	}
	source := fmt.Sprintf("%s, %s; %s", cl, cl.Model.Name, wl.Source)
	if of == "gaps" {
		return drawn(c, out, plots.GapCDF(out, report.GapCDFFigure(res, source)))
	}
	return drawn(c, out, plots.CDF(out, report.CDFFigure(res, source)))
}

func plotLatencyCommand() *cli.Command {
	flags := append([]cli.Flag{
		&cli.StringFlag{Name: "sweep", Usage: "CSV `FILE` written by sweep --out or evaluate --out", Required: true},
		&cli.StringFlag{Name: "title", Value: "Latency vs load", Usage: "figure title"},
		outFlag(),
	}, sloFlags(defaultSLOConfig())...)
	return &cli.Command{
		Name:      "latency",
		Usage:     "latency percentiles against load with the SLO limits, from a saved sweep or evaluate CSV",
		UsageText: "splitplan plot latency --sweep sweep.csv --out sweep.svg",
		Flags:     flags,
		Action:    plotLatency,
	}
}

func plotLatency(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	out, err := checkOut(c)
	if err != nil {
		return err
	}
	sc := defaultSLOConfig()
	if err := sc.readFlags(c, nil); err != nil {
		return err
	}
	spec, err := sc.spec()
	if err != nil {
		return err
	}
	rows, err := report.ReadLoadCSV(c.String("sweep"))
	if err != nil {
		return err
	}
	f := report.LatencyFigure(rows, spec, c.String("title"), filepath.Base(c.String("sweep"))+"; dashed: SLO limit")
	return drawn(c, out, plots.Latency(out, f))
}
