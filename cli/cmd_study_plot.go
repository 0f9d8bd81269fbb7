package cli

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"splitplan/plots"
	"splitplan/search"
	"splitplan/study"
)

// The study figures, drawn from a merged study table (study merge --out
// or --json): each job's best design by its goal's merit.

func studyPlotFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "merged", Usage: "merged study table `FILE` written by study merge (--out CSV or --json)", Required: true},
		&cli.StringFlag{Name: "x", Usage: "the `AXIS` along the x axis (default rps when it is an axis)"},
		outFlag(),
	}
}

func plotStudyCommand() *cli.Command {
	flags := append(studyPlotFlags(),
		&cli.StringFlag{Name: "panel", Usage: "one panel per value of `AXIS` (default model when it is an axis; none: one panel)"})
	return &cli.Command{
		Name:      "study",
		Usage:     "a study's best objective against the rate (or another numeric axis): a panel per model, a line per value of the other axes (e.g. GPU set)",
		UsageText: "splitplan plot study --merged study.csv [--x rps] [--panel model] --out study.png",
		Flags:     flags,
		Action:    plotStudy,
	}
}

func plotStudyWinnersCommand() *cli.Command {
	return &cli.Command{
		Name:      "study-winners",
		Usage:     "a study's winning design per cell: a row per combination of the other axes (e.g. model · GPU set), a column per value of --x (e.g. rate)",
		UsageText: "splitplan plot study-winners --merged study.csv [--x rps] --out winners.png",
		Flags:     studyPlotFlags(),
		Action:    plotStudyWinners,
	}
}

// studyPlotInputs checks a study figure's arguments and reads its table:
// the figure's path, the merged table, its outcomes and the x axis.
func studyPlotInputs(c *cli.Context) (string, *study.Table, []study.Outcome, string, error) {
	if err := noArgs(c); err != nil {
		return "", nil, nil, "", err
	}
	out, err := checkOut(c)
	if err != nil {
		return "", nil, nil, "", err
	}
	t, outs, x, err := readStudyTable(c)
	return out, t, outs, x, err
}

// readStudyTable reads --merged and the jobs' outcomes, and the x axis.
func readStudyTable(c *cli.Context) (*study.Table, []study.Outcome, string, error) {
	path := c.String("merged")
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, "", badInputf("--merged: %v", err)
	}
	defer f.Close()
	t, err := study.ReadTable(path, f)
	if err != nil {
		return nil, nil, "", badInputf("--merged: %v", err)
	}
	outs, err := t.Outcomes()
	if err != nil {
		return nil, nil, "", badInputf("--merged %s: %v", path, err)
	}
	x := c.String("x")
	switch {
	case x != "" && !t.HasAxis(x):
		return nil, nil, "", badInputf("--x %q: not an axis of %s (its axes: %s)", x, path, strings.Join(t.Axes, ", "))
	case x == "" && t.HasAxis("rps"):
		x = "rps"
	case x == "":
		return nil, nil, "", badInputf("--x: %s has no rps axis: name the axis to draw along (its axes: %s)", path, strings.Join(t.Axes, ", "))
	}
	return t, outs, x, nil
}

// axisValues returns each axis's values in order of first appearance.
func axisValues(outs []study.Outcome, axes []string) map[string][]string {
	vals := map[string][]string{}
	seen := map[string]bool{}
	for _, o := range outs {
		for _, a := range axes {
			if k := a + "\x00" + o.Axes[a]; !seen[k] {
				seen[k] = true
				vals[a] = append(vals[a], o.Axes[a])
			}
		}
	}
	return vals
}

// firstRowOf returns the line of the first job whose axis has value v.
func firstRowOf(outs []study.Outcome, axis, v string) int {
	for _, o := range outs {
		if o.Axes[axis] == v {
			return o.Row
		}
	}
	return 0
}

// combos lists the combinations of axes' values that occur in outs, in
// order of first appearance, each joined by " · ".
func combos(outs []study.Outcome, axes []string) ([]string, map[string]int) {
	var names []string
	index := map[string]int{}
	for _, o := range outs {
		k := comboOf(o, axes)
		if _, ok := index[k]; !ok {
			index[k] = len(names)
			names = append(names, k)
		}
	}
	return names, index
}

func comboOf(o study.Outcome, axes []string) string {
	parts := make([]string, len(axes))
	for i, a := range axes {
		parts[i] = o.Axes[a]
	}
	return strings.Join(parts, " · ")
}

// without returns axes less drop.
func without(axes []string, drop ...string) []string {
	var out []string
	for _, a := range axes {
		if !contains(drop, a) {
			out = append(out, a)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// oneGoal returns the goal shared by outs, or bad input naming them.
func oneGoal(outs []study.Outcome, what string) (search.Goal, error) {
	g := outs[0].Goal
	for _, o := range outs {
		if o.Goal != g {
			return 0, badInputf("%s mixes goals %s and %s: their objectives have different units (make goal the --panel, or merge one goal's study)", what, g, o.Goal)
		}
	}
	return g, nil
}

// meritText writes a merit with the unit of its goal's label, e.g. "76 $/h".
func meritText(g search.Goal, v float64) string {
	label := g.MeritLabel()
	if i := strings.LastIndex(label, "("); i >= 0 && strings.HasSuffix(label, ")") {
		return strconv.FormatFloat(v, 'g', 4, 64) + " " + label[i+1:len(label)-1]
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + " " + label
}

func axisLabel(x string) string {
	if x == "rps" {
		return "rate (req/s)"
	}
	return x
}

func plotStudy(c *cli.Context) error {
	out, t, outs, x, err := studyPlotInputs(c)
	if err != nil {
		return err
	}
	panel := c.String("panel")
	switch {
	case panel == "none":
		panel = ""
	case panel == "" && t.HasAxis("model") && x != "model":
		panel = "model"
	case panel != "" && (!t.HasAxis(panel) || panel == x):
		return badInputf("--panel %q: not an axis of %s other than --x %s (its axes: %s)", panel, c.String("merged"), x, strings.Join(t.Axes, ", "))
	}
	vals := axisValues(outs, t.Axes)
	xs := make([]float64, len(vals[x]))
	xi := map[string]int{}
	for i, v := range vals[x] {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return badInputf("--x %s: value %q (%s:%d) is not a number (plot study-winners draws any axis)", x, v, c.String("merged"), firstRowOf(outs, x, v))
		}
		xs[i], xi[v] = f, i
	}
	var panelAxes []string
	if panel != "" {
		panelAxes = []string{panel}
	}
	panels, pi := combos(outs, panelAxes)
	lineAxes := without(t.Axes, x, panel)
	lines, li := combos(outs, lineAxes)
	fig := plots.LatencyFigure{XLabel: axisLabel(x),
		Subtitle: fmt.Sprintf("%s: each point the best design of one job; a gap: no design met the goal, or no result", filepath.Base(c.String("merged")))}
	goals := make([]search.Goal, len(panels))
	for i := range goals {
		goals[i] = -1
	}
	for _, o := range outs {
		p := pi[comboOf(o, panelAxes)]
		if goals[p] >= 0 && goals[p] != o.Goal {
			return badInputf("--merged: panel %q mixes goals %s and %s: their objectives have different units (make goal the --panel)", panels[p], goals[p], o.Goal)
		}
		goals[p] = o.Goal
	}
	for i, name := range panels {
		if panel == "" {
			name = ""
		}
		fig.Panels = append(fig.Panels, plots.LatencyPanel{Name: name, YLabel: goals[i].MeritLabel()})
	}
	for _, name := range lines {
		s := plots.LatencySeries{Name: name, X: xs, Y: make([][]float64, len(panels))}
		if len(lineAxes) == 0 {
			s.Name = "best design"
		}
		for p := range s.Y {
			s.Y[p] = make([]float64, len(xs))
			for k := range s.Y[p] {
				s.Y[p][k] = math.NaN()
			}
		}
		fig.Series = append(fig.Series, s)
	}
	for _, o := range outs {
		if o.Found {
			fig.Series[li[comboOf(o, lineAxes)]].Y[pi[comboOf(o, panelAxes)]][xi[o.Axes[x]]] = o.Merit
		}
	}
	title := "best objective"
	if g, err := oneGoal(outs, "--merged"); err == nil {
		title = "best " + g.MeritLabel()
	}
	fig.Title = fmt.Sprintf("Study: %s against %s", title, axisLabel(x))
	if len(lineAxes) > 0 {
		fig.Title += ", per " + strings.Join(lineAxes, " · ")
	}
	return drawn(c, out, plots.Latency(out, fig))
}

func plotStudyWinners(c *cli.Context) error {
	out, t, outs, x, err := studyPlotInputs(c)
	if err != nil {
		return err
	}
	rowAxes := without(t.Axes, x)
	rows, ri := combos(outs, rowAxes)
	cols, ci := combos(outs, []string{x})
	fig := plots.WinnersFigure{Rows: rows, Cols: cols, XLabel: axisLabel(x), YLabel: strings.Join(rowAxes, " · "),
		Subtitle: fmt.Sprintf("%s: each cell one job, coloured and named by its best design, with its objective", filepath.Base(c.String("merged")))}
	g, err := oneGoal(outs, "--merged")
	if err != nil {
		fig.Title = "Study: winning design per job"
	} else {
		fig.Title = "Study: winning design per job, by " + g.MeritLabel()
	}
	for _, o := range outs {
		cell := plots.WinnerCell{Row: ri[comboOf(o, rowAxes)], Col: ci[o.Axes[x]]}
		if o.Found {
			cell.Design, cell.Text = o.Winner, meritText(o.Goal, o.Merit)
		}
		fig.Cells = append(fig.Cells, cell)
	}
	return drawn(c, out, plots.Winners(out, fig))
}
