package report

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"splitplan/search"
)

// csvTable is a CSV file read whole: its header and rows, with the line of
// each row for messages.
type csvTable struct {
	file  string
	cols  map[string]int
	rows  [][]string
	lines []int
}

// ErrRobustTable marks the error of a reader given optimize --confidence's
// robust table (ReadRobustCSV reads it) where it expects another table.
var ErrRobustTable = errors.New("this is optimize --confidence's robust table (one row per design, its nominal and robust plans)")

// readCSVTable reads path and checks that its header holds every column
// of required (a comma-separated header such as PointsCSVHeader).
func readCSVTable(path, required, what string) (*csvTable, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, inputf("%v", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err == io.EOF {
		return nil, inputf("%s: empty file: expected %s with the header %s", path, what, required)
	}
	if err != nil {
		return nil, inputf("%s: %v", path, err)
	}
	t := &csvTable{file: path, cols: map[string]int{}}
	for i, h := range head {
		t.cols[headerName(h)] = i
	}
	for _, col := range strings.Split(required, ",") {
		if _, ok := t.cols[col]; !ok {
			if _, robust := t.cols["robust_prompt"]; robust {
				return nil, inputf("%s:1: %w: expected %s, which optimize --out writes without --confidence", path, ErrRobustTable, what)
			}
			return nil, inputf("%s:1: no column %q: expected %s with the header %s…", path, col, what, required)
		}
	}
	err = t.readRows(r, func(err error) error {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return inputf("%s:%d: %v", path, pe.Line, pe.Err)
		}
		return inputf("%s: %v", path, err)
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// readRows reads the records after the header into t, with the line of
// each; a read error is returned as fail words it.
func (t *csvTable) readRows(r *csv.Reader, fail func(error) error) error {
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fail(err)
		}
		line, _ := r.FieldPos(0)
		t.rows = append(t.rows, rec)
		t.lines = append(t.lines, line)
	}
}

// headerName is a header field as a column name: trimmed, without a BOM.
func headerName(h string) string { return strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")) }

// cell reads one field of row i.
type cellReader struct {
	t   *csvTable
	i   int
	err error
}

func (t *csvTable) row(i int) *cellReader { return &cellReader{t: t, i: i} }

// str reads a field, "" where the file has no such column (the readers
// ask for optional columns only after together has found them).
func (c *cellReader) str(col string) string {
	j, ok := c.t.cols[col]
	if !ok || j >= len(c.t.rows[c.i]) {
		return ""
	}
	return strings.TrimSpace(c.t.rows[c.i][j])
}

// together reports whether the file has the optional columns cols, which
// are written together: all of them (true), or none (false); a file with
// some of them only is refused, naming the ones it lacks.
func (t *csvTable) together(what string, cols ...string) (bool, error) {
	var has, lacks []string
	for _, c := range cols {
		if _, ok := t.cols[c]; ok {
			has = append(has, c)
		} else {
			lacks = append(lacks, c)
		}
	}
	if len(has) > 0 && len(lacks) > 0 {
		return false, inputf("%s:1: column %s without %s: %s has them together or not at all", t.file,
			strings.Join(has, ", "), strings.Join(lacks, ", "), what)
	}
	return len(lacks) == 0, nil
}

func (c *cellReader) fail(col, want string) {
	if c.err == nil {
		c.err = inputf("%s:%d: column %s (%d): %q is not %s", c.t.file, c.t.lines[c.i], col, c.t.cols[col]+1, c.str(col), want)
	}
}

// num reads a number; empty gives NaN when optional.
func (c *cellReader) num(col string, optional bool) float64 {
	s := c.str(col)
	if s == "" && optional {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) || v < 0 {
		c.fail(col, "a number of zero or more")
		return math.NaN()
	}
	return v
}

func (c *cellReader) integer(col string) int {
	v, err := strconv.Atoi(c.str(col))
	if err != nil || v < 0 {
		c.fail(col, "a whole number of zero or more")
	}
	return v
}

func (c *cellReader) boolean(col string) bool {
	v, err := strconv.ParseBool(c.str(col))
	if err != nil {
		c.fail(col, "true or false")
	}
	return v
}

// PointRec is one evaluated point of a search, from a points CSV or a
// search result.
type PointRec struct {
	Design           string
	Prompt, Token    int
	RPS, Cost, Power float64
	Feasible, Pruned bool
	Binding          string
	Slack            float64 // NaN when none
	File             string
	Line             int
}

// ReadPointsCSV reads a file written by optimize --points.
func ReadPointsCSV(path string) ([]PointRec, error) {
	t, err := readCSVTable(path, PointsCSVHeader, "a points CSV (optimize --points)")
	if err != nil {
		return nil, err
	}
	out := make([]PointRec, 0, len(t.rows))
	for i := range t.rows {
		c := t.row(i)
		p := PointRec{Design: c.str("design"), Prompt: c.integer("prompt_machines"), Token: c.integer("token_machines"),
			RPS: c.num("rps", false), Cost: c.num("cost_usd_per_h", false), Power: c.num("power_kw", false),
			Feasible: c.boolean("feasible"), Binding: c.str("binding_slo"), File: path, Line: t.lines[i]}
		p.Pruned = p.Binding == "capacity_bound"
		p.Slack = math.NaN()
		if s := c.str("binding_slack"); s != "" {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
				c.fail("binding_slack", "a number (empty for none)")
			}
			p.Slack = v
		}
		if p.Design == "" {
			c.fail("design", "a design name")
		}
		if m := c.integer("machines"); c.err == nil && m != p.Prompt+p.Token {
			c.fail("machines", fmt.Sprintf("prompt_machines + token_machines (%d)", p.Prompt+p.Token))
		}
		if c.err != nil {
			return nil, c.err
		}
		out = append(out, p)
	}
	return out, nil
}

// PointsOf converts a search result's points.
func PointsOf(res *search.Result) []PointRec {
	out := make([]PointRec, 0, len(res.Points))
	for _, p := range res.Points {
		r := PointRec{Design: p.Design, Prompt: p.Prompt, Token: p.Token, RPS: p.RateRPS, Cost: p.CostUSDPerH, Power: p.PowerKW,
			Feasible: p.Feasible, Pruned: p.Pruned, Slack: math.NaN()}
		if p.Verdict != nil && len(p.Verdict.Figures) > 0 {
			r.Binding, r.Slack = p.Verdict.BindingFigure().Key(), p.Verdict.BindingFigure().Slack
			if !p.Verdict.Drained {
				r.Binding = "drain"
			}
		}
		out = append(out, r)
	}
	return out
}

// OptimumRec is one design's row of an optima CSV or search result.
type OptimumRec struct {
	Design, Goal     string
	Prompt, Token    int
	Machines         int
	Cost, Power, RPS float64 // NaN for a design with no point at all
	Capacity         float64 // NaN when not found
	Feasible         bool
	Baseline         bool
}

// Throughput is the optimum's sustained rate: its capacity, or the rate
// served.
func (o OptimumRec) Throughput() float64 {
	if finite(o.Capacity) && o.Capacity > 0 {
		return o.Capacity
	}
	return o.RPS
}

// ReadOptimaCSV reads a file written by optimize --out.
func ReadOptimaCSV(path string) ([]OptimumRec, error) {
	t, err := readCSVTable(path, OptimaCSVHeader, "an optima CSV (optimize --out)")
	if err != nil {
		return nil, err
	}
	if len(t.rows) == 0 {
		return nil, inputf("%s: no designs: the file has a header only", path)
	}
	var out []OptimumRec
	for i := range t.rows {
		c := t.row(i)
		var o OptimumRec
		if c.str("prompt_machines") == "" && c.str("feasible") == "false" {
			// A design with no point at all (nothing within the budget or
			// the bounds): no counts, no figures (as OptimaOf gives it).
			nan := math.NaN()
			o = OptimumRec{Design: c.str("design"), Goal: c.str("goal"), Cost: nan, Power: nan, RPS: nan, Capacity: nan}
		} else {
			o = OptimumRec{Design: c.str("design"), Goal: c.str("goal"), Prompt: c.integer("prompt_machines"), Token: c.integer("token_machines"),
				Machines: c.integer("machines"), Cost: c.num("cost_usd_per_h", false), Power: c.num("power_kw", false),
				RPS: c.num("rps", false), Capacity: c.num("capacity_rps", true), Feasible: c.boolean("feasible")}
			o.Baseline = o.Token == 0
			if c.err == nil && o.Machines != o.Prompt+o.Token {
				c.fail("machines", fmt.Sprintf("prompt_machines + token_machines (%d)", o.Prompt+o.Token))
			}
		}
		if o.Design == "" {
			c.fail("design", "a design name")
		}
		if c.err != nil {
			return nil, c.err
		}
		out = append(out, o)
	}
	return out, nil
}

// OptimaOf converts a search result's optima.
func OptimaOf(res *search.Result) []OptimumRec {
	var out []OptimumRec
	for _, d := range res.Designs {
		b := d.Best
		o := OptimumRec{Design: d.Design, Goal: fmt.Sprint(res.Goal), Prompt: b.Prompt, Token: b.Token, Machines: b.Machines(),
			Cost: b.CostUSDPerH, Power: b.PowerKW, RPS: b.RateRPS, Capacity: math.NaN(), Feasible: d.Found, Baseline: d.Baseline}
		if d.Found {
			o.Capacity = d.CapacityRPS
		}
		if !d.Found && d.Closest == nil {
			// No point at all: its figures are NaN (the CSV's empty ones).
			o.Cost, o.Power, o.RPS = math.NaN(), math.NaN(), math.NaN()
		}
		out = append(out, o)
	}
	return out
}
