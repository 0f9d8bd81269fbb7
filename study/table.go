package study

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"splitplan/search"
)

// Table is a merged study table read back (from the CSV Merge writes or the
// JSON WriteJSON writes).
type Table struct {
	// Axes are the study's axes, from the axis_NAME columns, in order.
	Axes []string
	// Header names the columns; Rows hold one design of one job each.
	Header []string
	Rows   [][]string
}

// ReadTable reads a merged table; name (the file) is used in errors. A
// table starting with '{' is JSON, otherwise CSV.
func ReadTable(name string, r io.Reader) (*Table, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var recs [][]string
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		recs, err = ReadJSON(bytes.NewReader(data))
	} else {
		recs, err = csv.NewReader(bytes.NewReader(data)).ReadAll()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(recs) < 2 {
		return nil, fmt.Errorf("%s: no rows (merge a study's results first: splitplan study merge)", name)
	}
	t := &Table{Header: recs[0], Rows: recs[1:]}
	for _, want := range []string{"job", "design", "goal", "feasible"} {
		if t.col(want) < 0 {
			return nil, fmt.Errorf("%s: no %q column: not a merged study table", name, want)
		}
	}
	for _, h := range t.Header {
		if a, ok := strings.CutPrefix(h, "axis_"); ok {
			t.Axes = append(t.Axes, a)
		}
	}
	return t, nil
}

func (t *Table) col(name string) int {
	for i, h := range t.Header {
		if h == name {
			return i
		}
	}
	return -1
}

// HasAxis reports whether a is one of the table's axes.
func (t *Table) HasAxis(a string) bool { return t.col("axis_"+a) >= 0 }

// Outcome is one job's answer: its best design by its goal's merit.
type Outcome struct {
	// Job is the job's key and Axes its axis values; Row is the line of
	// the job's first row in the table's file (the header is line 1).
	Job  string
	Axes map[string]string
	Row  int
	// Goal is the job's goal.
	Goal search.Goal
	// Found reports whether any design met the goal; then Winner is the
	// best one and Merit its figure (search.Goal.Merit).
	Found  bool
	Winner string
	Merit  float64
}

// Outcomes returns each job's outcome, in table order: among its feasible
// rows, the best by the goal's merit (the first of equals).
func (t *Table) Outcomes() ([]Outcome, error) {
	c := func(n string) int { return t.col(n) }
	num := func(r []string, n string) float64 {
		i := c(n)
		if i < 0 || r[i] == "" {
			return math.NaN()
		}
		v, err := strconv.ParseFloat(r[i], 64)
		if err != nil {
			return math.NaN()
		}
		return v
	}
	var out []Outcome
	index := map[string]int{}
	jobOf := map[string]string{} // the axis values' job
	for k, r := range t.Rows {
		if len(r) != len(t.Header) {
			return nil, fmt.Errorf("row %d has %d fields, the header %d", k+2, len(r), len(t.Header))
		}
		g, err := search.ParseGoal(r[c("goal")])
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", k+2, err)
		}
		key := r[c("job")]
		if key == "" {
			return nil, fmt.Errorf("row %d: no job key", k+2)
		}
		vals := make([]string, len(t.Axes)) // the axes' values, in t.Axes's order
		axes := make([]string, len(t.Axes))
		for j, a := range t.Axes {
			vals[j] = r[c("axis_"+a)]
			axes[j] = a + "=" + vals[j]
		}
		combo := strings.Join(axes, ", ")
		i, seen := index[key]
		if !seen {
			if other, ok := jobOf[combo]; ok {
				return nil, fmt.Errorf("row %d: jobs %s and %s have the same axis values (%s): a study runs one job for each", k+2, other, key, combo)
			}
			jobOf[combo] = key
			i = len(out)
			index[key] = i
			o := Outcome{Job: key, Axes: map[string]string{}, Goal: g, Row: k + 2}
			for j, a := range t.Axes {
				o.Axes[a] = vals[j]
			}
			out = append(out, o)
		} else if out[i].Goal != g {
			return nil, fmt.Errorf("row %d: job %s has goals %s and %s", k+2, key, out[i].Goal, g)
		} else if jobOf[combo] != key {
			return nil, fmt.Errorf("row %d: job %s has other axis values (%s) than on row %d", k+2, key, combo, out[i].Row)
		}
		if r[c("feasible")] != "true" {
			continue
		}
		d := search.DesignResult{Found: true, CapacityRPS: num(r, "capacity_rps")}
		d.Best.CostUSDPerH = num(r, "cost_usd_per_h")
		d.Best.PowerKW = num(r, "power_kw")
		d.Best.AverageKW = num(r, "kwh_per_day") / 24
		d.Best.OwnershipUSDPerH = num(r, "ownership_usd_per_h")
		v, higher := g.Merit(d)
		if math.IsNaN(v) {
			return nil, fmt.Errorf("row %d: design %s of job %s is feasible but has no %s", k+2, r[c("design")], key, g.MeritLabel())
		}
		o := &out[i]
		if !o.Found || (higher && v > o.Merit) || (!higher && v < o.Merit) {
			o.Found, o.Winner, o.Merit = true, r[c("design")], v
		}
	}
	return out, nil
}
