package report

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/plots"
	"splitplan/search"
)

// Heatmap colourings.
const (
	ColorSLO      = "slo"      // the binding SLO's measured / limit
	ColorCost     = "cost"     // $/h
	ColorCapacity = "capacity" // the highest rate a point met every SLO at
)

// HeatmapInput is what a heatmap is drawn from.
type HeatmapInput struct {
	Points []PointRec
	// Design is the design's label as the points name it.
	Design string
	// RPS picks one rate (NaN: the only rate, or capacity when several).
	RPS float64
	// Color is ColorSLO, ColorCost or ColorCapacity ("" chooses).
	Color string
	// Optimum, when known, is starred; otherwise the best feasible cell.
	Optimum *OptimumRec
	// GridPoints is the size of the design space (0 if unknown).
	GridPoints int
	// Source says where the points came from, for the subtitle.
	Source string
	// Exhaustive reports that the search simulated every point it could.
	Exhaustive bool
	// Baseline reports that the design is co-located (one pool).
	Baseline bool
}

// HeatmapFigure builds the design-space figure of one design.
func HeatmapFigure(in HeatmapInput) (plots.HeatmapFigure, error) {
	var pts []PointRec
	rates := map[float64]bool{}
	for _, p := range in.Points {
		if strings.EqualFold(p.Design, in.Design) {
			pts = append(pts, p)
			rates[p.RPS] = true
		}
	}
	if len(pts) == 0 {
		var names []string
		seen := map[string]bool{}
		for _, p := range in.Points {
			if !seen[p.Design] {
				seen[p.Design] = true
				names = append(names, p.Design)
			}
		}
		return plots.HeatmapFigure{}, inputf("no points of design %s in %s (it holds: %s)", in.Design, in.Source, strings.Join(names, ", "))
	}
	var rateList []float64
	for r := range rates {
		rateList = append(rateList, r)
	}
	sort.Float64s(rateList)
	color := in.Color
	rateText := ""
	if finite(in.RPS) {
		var keep []PointRec
		for _, p := range pts {
			if math.Abs(p.RPS-in.RPS) <= 1e-9*math.Max(1, in.RPS) {
				keep = append(keep, p)
			}
		}
		if len(keep) == 0 {
			return plots.HeatmapFigure{}, inputf("--rps %g: design %s was simulated at %s req/s in %s", in.RPS, in.Design, rateSummary(rateList), in.Source)
		}
		pts, rateText = keep, fmt.Sprintf("at %g req/s", in.RPS)
		if color == ColorCapacity {
			return plots.HeatmapFigure{}, inputf("--color capacity needs the points of every rate: drop --rps")
		}
	} else if len(rateList) == 1 {
		rateText = fmt.Sprintf("at %g req/s", rateList[0])
		if color == ColorCapacity {
			return plots.HeatmapFigure{}, inputf("--color capacity: %s holds %s at one rate only", in.Source, in.Design)
		}
	} else {
		if color != "" && color != ColorCapacity {
			return plots.HeatmapFigure{}, inputf("%s holds %s at %d rates (%s req/s): choose one with --rps, or colour by --color capacity",
				in.Source, in.Design, len(rateList), rateSummary(rateList))
		}
		color, rateText = ColorCapacity, "capacity within every SLO"
	}
	if color == "" {
		color = ColorSLO
	}
	type key struct{ p, t int }
	cells := map[key]*plots.HeatCell{}
	var order []key
	cost := map[key]float64{}
	for _, p := range pts {
		k := key{p.Prompt, p.Token}
		c, ok := cells[k]
		if !ok {
			c = &plots.HeatCell{Prompt: p.Prompt, Token: p.Token, State: plots.Pruned, Value: math.NaN()}
			cells[k] = c
			order = append(order, k)
			cost[k] = p.Cost
		}
		switch {
		case p.Feasible:
			c.State = plots.Feasible
			switch color {
			case ColorCost:
				c.Value = p.Cost
			case ColorCapacity:
				if !(c.Value >= p.RPS) {
					c.Value = p.RPS
				}
			default:
				c.Value = 1 - p.Slack
				if !finite(p.Slack) {
					c.Value = math.NaN()
				}
			}
		case !p.Pruned && c.State == plots.Pruned:
			c.State = plots.Infeasible
		}
	}
	f := plots.HeatmapFigure{Title: fmt.Sprintf("Design space of %s, %s", in.Design, rateText)}
	switch color {
	case ColorCost:
		f.ColorLabel = "cost of feasible points ($/h)"
	case ColorCapacity:
		f.ColorLabel = "capacity within every SLO (req/s)"
		// A throughput search tries each cluster at the rates it still
		// needs to beat: a grey cell failed those, so its capacity is
		// below the least rate it was tried at, not nil.
		f.InfeasibleLabel = "capacity below the rates tried"
	default:
		f.ColorLabel = "binding SLO of feasible points (measured / limit)"
	}
	if in.Baseline {
		f.YLabel = "(baseline: one pool)"
		f.XLabel = "machines"
	}
	feasible, pruned := 0, 0
	for _, k := range order {
		c := cells[k]
		f.Cells = append(f.Cells, *c)
		if c.State == plots.Feasible {
			feasible++
		}
		if c.State == plots.Pruned {
			pruned++
		}
	}
	// The optimum: the given one, else the best feasible cell.
	if o := in.Optimum; o != nil && o.Feasible {
		f.HasOptimum, f.OptPrompt, f.OptToken = true, o.Prompt, o.Token
	} else {
		var best *key
		for i, k := range order {
			c := cells[k]
			if c.State != plots.Feasible {
				continue
			}
			if best == nil {
				best = &order[i]
				continue
			}
			b := cells[*best]
			better := cost[k] < cost[*best] || (cost[k] == cost[*best] && k.p+k.t < best.p+best.t)
			if color == ColorCapacity {
				better = c.Value > b.Value || (c.Value == b.Value && cost[k] < cost[*best])
			}
			if better {
				best = &order[i]
			}
		}
		if best != nil {
			f.HasOptimum, f.OptPrompt, f.OptToken = true, best.p, best.t
		}
	}
	sub := fmt.Sprintf("%d points evaluated (%d feasible", len(order), feasible)
	if pruned > 0 {
		sub += fmt.Sprintf(", %d pruned by a capacity bound", pruned)
	}
	sub += ")"
	if in.GridPoints > len(order) {
		sub += fmt.Sprintf(" of %d in the design space", in.GridPoints)
	}
	switch {
	case in.Exhaustive && in.GridPoints > len(order):
		sub += "; white cells were not simulated (rejected by an analytic bound)"
	case in.GridPoints == 0 || in.GridPoints > len(order):
		sub += "; white cells were not simulated (pruned search; --exhaustive fills the grid)"
	}
	if in.Optimum != nil && in.Optimum.Feasible {
		sub += "\n★ the search's optimum; black line: the feasible frontier (fewest token machines per prompt count)"
	} else if color == ColorCapacity {
		sub += "\n★ highest capacity; black line: the feasible frontier (fewest token machines per prompt count)"
	} else {
		sub += "\n★ cheapest feasible point; black line: the feasible frontier (fewest token machines per prompt count)"
	}
	f.Subtitle = in.Source + "\n" + sub
	return f, nil
}

func rateSummary(r []float64) string {
	if len(r) <= 6 {
		s := make([]string, len(r))
		for i, v := range r {
			s[i] = fmt.Sprintf("%.4g", v)
		}
		return strings.Join(s, ", ")
	}
	return fmt.Sprintf("%.4g … %.4g", r[0], r[len(r)-1])
}

// ParetoFigure builds cost (or power, yPower) against throughput: every
// point of every design at its capacity (the highest rate it met every
// SLO at), and the optima, labelled.
func ParetoFigure(points []PointRec, optima [][]OptimumRec, yPower bool, source string) plots.ParetoFigure {
	f := plots.ParetoFigure{Title: "Cost vs throughput", XLabel: "throughput within every SLO (req/s)", YLabel: "cost ($/h)"}
	if yPower {
		f.Title, f.YLabel = "Power vs throughput", "provisioned power (kW)"
	}
	y := func(cost, power float64) float64 {
		if yPower {
			return power
		}
		return cost
	}
	type key struct {
		d    string
		p, t int
	}
	capOf := map[key]int{}
	for _, p := range points {
		if !p.Feasible {
			continue
		}
		k := key{p.Design, p.Prompt, p.Token}
		if i, ok := capOf[k]; ok {
			if p.RPS > f.Points[i].X {
				f.Points[i].X = p.RPS
			}
			continue
		}
		capOf[k] = len(f.Points)
		f.Points = append(f.Points, plots.ParetoPoint{Design: p.Design, X: p.RPS, Y: y(p.Cost, p.Power)})
	}
	labelled := map[string]bool{}
	for _, file := range optima {
		for _, o := range file {
			if !o.Feasible {
				continue
			}
			label := o.Design
			if len(optima) > 1 {
				label = fmt.Sprintf("%s (%s)", o.Design, o.Goal)
			}
			k := key{o.Design, o.Prompt, o.Token}
			if i, ok := capOf[k]; ok && !labelled[o.Design+"/"+o.Goal] && f.Points[i].Label == "" {
				f.Points[i].Label = label
			} else {
				f.Points = append(f.Points, plots.ParetoPoint{Design: o.Design, X: o.Throughput(), Y: y(o.Cost, o.Power), Label: label})
			}
			labelled[o.Design+"/"+o.Goal] = true
		}
	}
	if len(optima) == 0 {
		// Label each design's point of highest capacity (ties: least Y).
		best := map[string]int{}
		for i, p := range f.Points {
			j, ok := best[p.Design]
			if !ok || p.X > f.Points[j].X || (p.X == f.Points[j].X && p.Y < f.Points[j].Y) {
				best[p.Design] = i
			}
		}
		for d, i := range best {
			f.Points[i].Label = d
		}
	}
	f.Subtitle = source + "\neach point at its capacity (the highest rate simulated that met every SLO); lines: Pareto frontier per design"
	return f
}

// NamedOptima is one optima file (or search) for the summary figure.
type NamedOptima struct {
	Title  string
	Optima []OptimumRec
}

// PreferredBaseline is the design figures normalize to when it was
// searched (the paper's reference design); else the first baseline with
// an optimum.
const PreferredBaseline = "Baseline-H100"

// summaryMetrics are the bars of a summary group.
var summaryMetrics = []string{"throughput (req/s)", "cost ($/h)", "power (kW)", "machines"}

// SummaryFigure normalizes every design's optimum to the baseline's, per
// search.
func SummaryFigure(sets []NamedOptima, baseline string) (plots.SummaryFigure, error) {
	f := plots.SummaryFigure{Title: "Optima relative to " + baseline, Baseline: baseline, Metrics: summaryMetrics}
	for _, s := range sets {
		var base *OptimumRec
		for i := range s.Optima {
			if strings.EqualFold(s.Optima[i].Design, baseline) {
				base = &s.Optima[i]
			}
		}
		if base == nil {
			var names []string
			for _, o := range s.Optima {
				names = append(names, o.Design)
			}
			if len(names) > 12 {
				names = append(names[:12], fmt.Sprintf("… and %d more", len(names)-12))
			}
			return f, inputf("%s: no design %s to normalize to (choose --baseline among %s)", s.Title, baseline, strings.Join(names, ", "))
		}
		if !base.Feasible {
			return f, fmt.Errorf("%s: %w: the baseline %s has no optimum, nothing to normalize to (choose another --baseline)", s.Title, plots.ErrNoFeasible, baseline)
		}
		pan := plots.SummaryPanel{Title: s.Title, Values: make([][]float64, len(summaryMetrics))}
		shown, folded := summaryDesigns(s.Optima, base)
		if folded > 0 {
			pan.Title = fmt.Sprintf("%s: %s and the %d best; +%d more designs, see CSV", s.Title, base.Design, len(shown)-1, folded)
		}
		for _, o := range shown {
			pan.Designs = append(pan.Designs, o.Design)
			vals := []float64{o.Throughput() / base.Throughput(), o.Cost / base.Cost, o.Power / base.Power, float64(o.Machines) / float64(base.Machines)}
			for m := range vals {
				if !o.Feasible {
					vals[m] = math.NaN()
				}
				pan.Values[m] = append(pan.Values[m], vals[m])
			}
		}
		f.Panels = append(f.Panels, pan)
	}
	f.Subtitle = "each design's optimum per search; no bars: no optimum within the bounds"
	return f, nil
}

// DefaultBaseline is the baseline a summary normalizes to when none was
// named: preferred when every set has it, else the first feasible
// baseline design of the first set that every set has (preferred when
// none is).
func DefaultBaseline(sets []NamedOptima, preferred string) string {
	has := func(name string) bool {
		for _, s := range sets {
			found := false
			for _, o := range s.Optima {
				found = found || (strings.EqualFold(o.Design, name) && o.Feasible)
			}
			if !found {
				return false
			}
		}
		return true
	}
	if len(sets) == 0 || has(preferred) {
		return preferred
	}
	for _, o := range sets[0].Optima {
		if o.Baseline && has(o.Design) {
			return o.Design
		}
	}
	return preferred
}

// MaxSummaryDesigns is the most designs a summary panel draws; the rest
// are left out with a note in the panel's title.
const MaxSummaryDesigns = 25

// summaryDesigns returns the optima a summary panel draws, in their order,
// and how many it leaves out: all of them up to MaxSummaryDesigns, else
// the baseline and the best others by the goal (feasible first; most
// throughput for throughput goals, least power for power goals, least
// cost otherwise).
func summaryDesigns(optima []OptimumRec, base *OptimumRec) ([]OptimumRec, int) {
	if len(optima) <= MaxSummaryDesigns {
		return optima, 0
	}
	score := func(o OptimumRec) float64 {
		switch {
		case !o.Feasible:
			return math.Inf(1)
		case o.Goal == "throughput" || o.Goal == "batch":
			return -o.Throughput()
		case o.Goal == "power":
			return o.Power
		}
		return o.Cost
	}
	idx := make([]int, 0, len(optima))
	for i := range optima {
		if optima[i].Design != base.Design {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return score(optima[idx[a]]) < score(optima[idx[b]]) })
	keep := map[int]bool{}
	for _, i := range idx[:MaxSummaryDesigns-1] {
		keep[i] = true
	}
	var out []OptimumRec
	for i, o := range optima {
		if keep[i] || o.Design == base.Design {
			out = append(out, o)
		}
	}
	return out, len(optima) - len(out)
}

// GoalTitle describes a search result's goal for figure titles.
func GoalTitle(res *search.Result) string {
	return res.Goal.Title(res)
}

// WriteOptimizePlots writes the figures of a search into dir (created if
// missing), each as PNG and SVG: the design-space heatmap of every
// Splitwise design that found an optimum, cost (or power) against
// throughput with the Pareto frontiers for the throughput and batch goals
// or the cost (or power) of each design's optimum for the cost and power
// goals, and the summary bars normalized to a baseline (Baseline-H100 when
// searched, else the first baseline with an optimum). It returns the paths
// written; figures with nothing feasible to show are skipped.
func WriteOptimizePlots(dir string, res *search.Result, p *search.Problem) ([]string, error) {
	fd, err := newFigureDir(dir)
	if err != nil {
		return nil, err
	}
	both := fd.both
	points := PointsOf(res)
	optima := OptimaOf(res)
	source := fmt.Sprintf("%s; %s, %s request sizes, %gs per simulation, seed %d", GoalTitle(res), p.Model, p.Workload.Sizes.Name(), p.Workload.DurationS, p.Workload.Seed)
	throughputGoal := res.Goal.NeedsBudget()
	if p.PruneDesigns {
		// A GPU-pair space: the pairs figure, and the design space of the
		// best design only (a figure per design would be hundreds).
		if recs, rows, cols, ok := PairsOf(res, p.Catalog); ok {
			f := PairsFigure(res, recs, rows, cols, source)
			if err := both("pairs", func(path string) error { return plots.Pairs(path, f) }); err != nil {
				return fd.written, err
			}
		}
	}
	for i, d := range res.Designs {
		if d.Baseline || !d.Found || (p.PruneDesigns && i != res.Winner) {
			continue
		}
		in := HeatmapInput{Points: points, Design: d.Design, RPS: math.NaN(), Optimum: &optima[i], GridPoints: d.GridPoints, Source: source, Exhaustive: p.Exhaustive}
		if !throughputGoal {
			in.RPS = res.RateRPS
		}
		f, err := HeatmapFigure(in)
		if err != nil {
			continue // no points of it (every point pruned away)
		}
		if err := both("heatmap-"+fileName(d.Design), func(path string) error { return plots.Heatmap(path, f) }); err != nil {
			return fd.written, err
		}
	}
	if throughputGoal {
		f := ParetoFigure(points, [][]OptimumRec{optima}, res.Goal.ByPower(res), source)
		if err := both("pareto", func(path string) error { return plots.Pareto(path, f) }); err != nil {
			return fd.written, err
		}
	} else if !p.PruneDesigns {
		f := designBarsFigure(optima, res.Goal.ByPower(res), source)
		if err := both(fmt.Sprint(res.Goal)+"-by-design", func(path string) error { return plots.Bars(path, f) }); err != nil {
			return fd.written, err
		}
	}
	if !p.PruneDesigns {
		// Without a feasible baseline there is nothing to normalize to:
		// SummaryFigure says so and no summary is drawn.
		set := []NamedOptima{{Title: GoalTitle(res), Optima: optima}}
		f, err := SummaryFigure(set, DefaultBaseline(set, PreferredBaseline))
		if err == nil {
			if err := both("summary", func(path string) error { return plots.Summary(path, f) }); err != nil {
				return fd.written, err
			}
		}
	}
	return fd.written, nil
}

// designBarsFigure is the cost (or power) of each design's optimum.
func designBarsFigure(optima []OptimumRec, power bool, source string) plots.BarsFigure {
	f := plots.BarsFigure{Title: "Cost of each design's optimum", YLabel: "cost ($/h)", Subtitle: source + "\nno bar: no optimum within the bounds"}
	if power {
		f.Title, f.YLabel = "Provisioned power of each design's optimum", "power (kW)"
	}
	value := func(o OptimumRec) float64 {
		switch {
		case !o.Feasible:
			return math.NaN()
		case power:
			return o.Power
		}
		return o.Cost
	}
	if len(optima) > MaxSummaryDesigns {
		// The MaxSummaryDesigns least (feasible first), in their order.
		idx := make([]int, len(optima))
		for i := range idx {
			idx[i] = i
		}
		key := func(i int) float64 {
			if v := value(optima[i]); finite(v) {
				return v
			}
			return math.Inf(1)
		}
		sort.SliceStable(idx, func(a, b int) bool { return key(idx[a]) < key(idx[b]) })
		keep := map[int]bool{}
		for _, i := range idx[:MaxSummaryDesigns] {
			keep[i] = true
		}
		var kept []OptimumRec
		for i, o := range optima {
			if keep[i] {
				kept = append(kept, o)
			}
		}
		f.Subtitle += fmt.Sprintf("; the %d least shown, +%d more designs, see CSV", len(kept), len(optima)-len(kept))
		optima = kept
	}
	for _, o := range optima {
		v := value(o)
		label := ""
		if o.Feasible {
			label = fmt.Sprintf("%d+%d", o.Prompt, o.Token)
			if o.Baseline {
				label = fmt.Sprintf("×%d", o.Prompt)
			}
		}
		f.Names = append(f.Names, o.Design)
		f.Values = append(f.Values, v)
		f.Labels = append(f.Labels, label)
	}
	return f
}

// figureDir writes figures into one directory, each as PNG and SVG, and
// keeps the paths written.
type figureDir struct {
	dir     string
	written []string
}

// newFigureDir makes dir (a --plot directory) if need be.
func newFigureDir(dir string) (*figureDir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, inputf("--plot: %v", err)
	}
	return &figureDir{dir: dir}, nil
}

// each writes name.png and name.svg with draw.
func (f *figureDir) each(name string, draw func(path string) error) error {
	for _, ext := range []string{".png", ".svg"} {
		path := filepath.Join(f.dir, name+ext)
		if err := draw(path); err != nil {
			return err
		}
		f.written = append(f.written, path)
	}
	return nil
}

// both is each, skipping a figure with nothing (feasible) to draw.
func (f *figureDir) both(name string, draw func(path string) error) error {
	if err := f.each(name, draw); err != nil && !errors.Is(err, plots.ErrNoFeasible) && !errors.Is(err, plots.ErrNoData) {
		return err
	}
	return nil
}

// fileName makes a design label safe as a file name, in ASCII: a
// generated design by its alias (costpower.DesignAlias), "Splitwise
// H200·tp1 / H100·tp2" → "Splitwise-H200-tp1-H100-tp2".
func fileName(s string) string {
	s = costpower.DesignAlias(s)
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ' ' || r == ':' || r == '+' || r > 127 {
			return '_'
		}
		return r
	}, s)
}

// CDFFigure gathers the batched-token times of each home pool.
func CDFFigure(res *evaluator.Result, source string) plots.CDFFigure {
	f := plots.CDFFigure{Title: "Time spent at each batch size, per machine role"}
	var order []evaluator.Pool
	by := map[evaluator.Pool]*plots.CDFSeries{}
	count := map[evaluator.Pool]int{}
	for _, m := range res.Machines {
		s, ok := by[m.Pool]
		if !ok {
			s = &plots.CDFSeries{}
			by[m.Pool] = s
			order = append(order, m.Pool)
		}
		count[m.Pool]++
		for _, tt := range m.BatchTokens {
			s.Tokens = append(s.Tokens, tt.Tokens)
			s.S = append(s.S, tt.S)
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i] < order[j] })
	for _, pool := range order {
		s := by[pool]
		s.Name = fmt.Sprintf("%s machines (%d)", pool, count[pool])
		f.Series = append(f.Series, *s)
	}
	f.Subtitle = source + "\na prompt counts its tokens, a decoding request 1; y: share of the role's busy time in iterations of at most x tokens"
	return f
}

// GapCDFFigure is the CDFs of res's gaps between tokens (plot cdf --of
// gaps): every gap (the ITL, from the simulator's sketch: each bucket at
// its upper end, within 0.78%) and each request's longest gap (its stall,
// exact).
func GapCDFFigure(res *evaluator.Result, source string) plots.GapCDFFigure {
	f := plots.GapCDFFigure{Title: "Gaps between tokens: every gap and each request's longest"}
	x, frac := res.ITL.CDF()
	f.Series = append(f.Series, plots.GapCDFSeries{Name: fmt.Sprintf("every gap (ITL, %d gaps)", res.ITL.Count()), X: x, Frac: frac})
	var stalls []float64
	for i := 0; i < res.RequestCount(); i++ {
		if l := res.Latency(i); l.OutputTokens > 1 && l.E2ES > 0 {
			stalls = append(stalls, l.MaxGapS)
		}
	}
	sort.Float64s(stalls)
	s := plots.GapCDFSeries{Name: fmt.Sprintf("each request's longest gap (stall, %d requests)", len(stalls))}
	for i, v := range stalls {
		if i+1 < len(stalls) && stalls[i+1] == v {
			continue // (one point per value)
		}
		s.X, s.Frac = append(s.X, v), append(s.Frac, float64(i+1)/float64(len(stalls)))
	}
	f.Series = append(f.Series, s)
	f.Subtitle = source + "\ny: share of the gaps (ITL) or of the requests (stall) at or below x"
	return f
}
