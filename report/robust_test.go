package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"splitplan/evaluator/perf/errmodel"
	"splitplan/search"
)

// tinyRobust runs a small real robust search: six scenarios, three
// designs, up to six machines a pool, where some designs find nothing in
// some scenarios.
func tinyRobust(t *testing.T) (*search.RobustResult, *search.Problem) {
	t.Helper()
	_, p := tinySearch(t, search.GoalCost, 6, 0, 6, 20, "Baseline-H100", "Splitwise-HH", "Splitwise-AA")
	rr, err := search.RunRobust(context.Background(), p, search.Robust{Confidence: 0.8, Scenarios: 6, Errors: errmodel.Builtin(), Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	return rr, p
}

// TestRobustCSVRoundTrip: a real robust search's rows, written and read
// back, are RobustOf's (a missing quantile stays +Inf).
func TestRobustCSVRoundTrip(t *testing.T) {
	t.Parallel()
	rr, _ := tinyRobust(t)
	path := writeTemp(t, "robust.csv", func(f *os.File) error { return WriteRobustCSV(f, rr) })
	got, err := ReadRobustCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	want := RobustOf(rr)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, want)
	}
	// The round trip checks little unless some design has each of these.
	for _, c := range []struct {
		what string
		has  func(RobustRec) bool
	}{
		{"a robust plan", func(r RobustRec) bool { return r.RobustFound }},
		{"a nominal optimum counted in the scenarios", func(r RobustRec) bool { return r.NominalPassed >= 0 }},
		{"an exact robust count", func(r RobustRec) bool { return r.PassedExact }},
	} {
		if !slices.ContainsFunc(want, c.has) {
			t.Errorf("no design has %s: the round trip checks too little", c.what)
		}
	}
	// Older files: without passed_exact (written before every scenario
	// was counted) the robust counts read as lower bounds; without
	// nominal_passed too, the nominal optima as not counted.
	var buf bytes.Buffer
	if err := WriteRobustCSV(&buf, rr); err != nil {
		t.Fatal(err)
	}
	for drop := 1; drop <= 2; drop++ {
		var old []string
		for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			for range drop {
				l = l[:strings.LastIndex(l, ",")]
			}
			old = append(old, l)
		}
		prev := writeTemp(t, "old.csv", func(f *os.File) error { _, err := f.WriteString(strings.Join(old, "\n") + "\n"); return err })
		olds, err := ReadRobustCSV(prev)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range olds {
			if r.PassedExact || drop == 2 && r.NominalPassed != -1 {
				t.Errorf("%s in a file without its last %d columns: exact %v, nominal passed %d", r.Design, drop, r.PassedExact, r.NominalPassed)
			}
			r.NominalPassed, r.PassedExact = want[i].NominalPassed, want[i].PassedExact
			if !reflect.DeepEqual(r, want[i]) {
				t.Errorf("%s in a file without its last %d columns:\n%+v\nwant\n%+v", r.Design, drop, r, want[i])
			}
		}
	}
	bad := writeTemp(t, "bad.csv", func(f *os.File) error {
		_, err := f.WriteString("design,goal\nx,cost\n")
		return err
	})
	if _, err := ReadRobustCSV(bad); err == nil || !strings.Contains(err.Error(), "no column") {
		t.Errorf("a CSV without the robust columns: %v", err)
	}
}

// TestRobustTableAndJSON: the table names every design with its nominal
// and robust plans and the scenario wins; the JSON nests the nominal
// optima and the robust answer, whose best is the robust winner.
func TestRobustTableAndJSON(t *testing.T) {
	t.Parallel()
	rr, p := tinyRobust(t)
	var b bytes.Buffer
	PrintRobust(&b, rr, p)
	out := b.String()
	for _, d := range rr.Designs {
		if !strings.Contains(out, d.Design) {
			t.Errorf("table lacks %s:\n%s", d.Design, out)
		}
	}
	for _, s := range []string{"NOMINAL", "ROBUST", "P10", "P90", "scenarios won", "GPU pairs"} {
		if !strings.Contains(out, s) {
			t.Errorf("table lacks %q:\n%s", s, out)
		}
	}
	// A design without a robust plan (the tiny space's Baseline-H100) is
	// footnoted; with every plan found there is no footnote.
	want := fmt.Sprintf("(ROBUST none: no plan of the design within --max-machines (%d a pool) meets every SLO in %d of the %d scenarios)", p.MaxMachines, rr.Needed, rr.Scenarios)
	if !slices.ContainsFunc(rr.Designs, func(d search.RobustDesign) bool { return !d.Found && !d.BoundedOut }) {
		t.Fatal("the tiny space has no design without a robust plan: the footnote is not checked")
	}
	if !strings.Contains(out, want) {
		t.Errorf("table lacks %q:\n%s", want, out)
	}
	all := *rr
	all.Designs = slices.Clone(rr.Designs)
	for i := range all.Designs {
		all.Designs[i].Found = true
	}
	b.Reset()
	PrintRobust(&b, &all, p)
	if strings.Contains(b.String(), "ROBUST none") {
		t.Errorf("footnote with every plan found:\n%s", b.String())
	}
	// A robust plan below its design's nominal optimum is explained; at
	// or above it, nothing is said.
	anyBelow := false
	for i, d := range rr.Designs {
		if nd := rr.Nominal.Designs[i]; d.Found && !d.BoundedOut && nd.Found && d.Objective < ObjectiveOf(rr.Nominal.Goal, nd.Best)-1e-6 {
			anyBelow = true
		}
	}
	if got := strings.Contains(out, "below NOMINAL"); got != anyBelow {
		t.Errorf("below-nominal note %v, want %v:\n%s", got, anyBelow, out)
	}
	below := *rr
	below.Designs = slices.Clone(rr.Designs)
	named := ""
	for i, d := range below.Designs {
		if nd := rr.Nominal.Designs[i]; d.Found && !d.BoundedOut && nd.Found && named == "" {
			below.Designs[i].Objective = ObjectiveOf(rr.Nominal.Goal, nd.Best) - 1
			named = d.Design
		}
	}
	if named == "" {
		t.Fatal("no design with both a nominal and a robust plan: the below-nominal note is not checked")
	}
	b.Reset()
	PrintRobust(&b, &below, p)
	if want := fmt.Sprintf("(ROBUST below NOMINAL for %s: the nominal optimum is the least $/h meeting every SLO in the nominal run", named); !strings.Contains(b.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, b.String())
	}
	// The scenarios line compares the robust search's time with the
	// nominal search's: both together over the nominal one.
	timed := *rr
	timed.NominalTime, timed.ScenarioTime = 500*time.Millisecond, 6500*time.Millisecond
	b.Reset()
	PrintRobust(&b, &timed, p)
	if want := "on 1 worker: with the nominal search's 500ms, 14.0× its time\n"; !strings.Contains(b.String(), want) {
		t.Errorf("scenarios line lacks %q:\n%s", want, b.String())
	}
	b.Reset()
	if err := WriteRobustJSON(&b, rr.Nominal, rr, nil, p); err != nil {
		t.Fatal(err)
	}
	var j struct {
		Nominal struct {
			Designs []struct{ Design string } `json:"designs"`
		} `json:"nominal"`
		Robust struct {
			Best    string `json:"best"`
			Designs []struct {
				Design  string     `json:"design"`
				PromptQ []*float64 `json:"prompt_p10_p50_p90"`
			} `json:"designs"`
		} `json:"robust"`
	}
	if err := json.Unmarshal(b.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if len(j.Nominal.Designs) != len(rr.Designs) || len(j.Robust.Designs) != len(rr.Designs) {
		t.Fatalf("JSON has %d nominal and %d robust designs, want %d", len(j.Nominal.Designs), len(j.Robust.Designs), len(rr.Designs))
	}
	if rr.Winner >= 0 && j.Robust.Best != rr.Designs[rr.Winner].Design {
		t.Errorf("JSON best %q, want %q", j.Robust.Best, rr.Designs[rr.Winner].Design)
	}
	for i, d := range j.Robust.Designs {
		for k, q := range d.PromptQ {
			v := rr.Designs[i].Spread.Prompt[k]
			if (q == nil) != math.IsInf(v, 1) || q != nil && *q != v {
				t.Errorf("%s: prompt quantile %d in JSON %v, want %v", d.Design, k, q, v)
			}
		}
	}
}

// TestSensitivityReport: the table has a row per input and step, the JSON
// the same rows, and the tornado puts the input with the widest swing on
// top (last).
func TestSensitivityReport(t *testing.T) {
	t.Parallel()
	res, p := tinySearch(t, search.GoalCost, 6, 0, 8, 20, "Splitwise-HH", "Baseline-H100")
	rows, err := search.Sensitivity(context.Background(), p, res, []float64{-0.25, 0.25})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	PrintSensitivity(&b, res, rows)
	for _, in := range search.SensitivityInputs {
		if strings.Count(b.String(), in.String()+" ") < 2 {
			t.Errorf("table lacks two rows of %s:\n%s", in, b.String())
		}
	}
	b.Reset()
	if err := WriteRobustJSON(&b, res, nil, rows, p); err != nil {
		t.Fatal(err)
	}
	var j struct {
		Robust      *json.RawMessage  `json:"robust"`
		Sensitivity []jsonSensitivity `json:"sensitivity"`
	}
	if err := json.Unmarshal(b.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if j.Robust != nil || len(j.Sensitivity) != len(rows) {
		t.Errorf("JSON: robust %v, %d sensitivity rows, want none and %d", j.Robust != nil, len(j.Sensitivity), len(rows))
	}
	f := SensitivityFigure(res, rows, "test")
	if len(f.Inputs) != len(search.SensitivityInputs) {
		t.Fatalf("%d tornado inputs, want %d", len(f.Inputs), len(search.SensitivityInputs))
	}
	swing := func(in int) float64 {
		x := f.Inputs[in]
		s := 0.0
		for _, v := range []float64{x.Down[0], x.Up[0]} {
			if !math.IsNaN(v) {
				s += math.Abs(v)
			}
		}
		return s
	}
	for i := 1; i < len(f.Inputs); i++ {
		if swing(i) < swing(i-1) {
			t.Errorf("tornado order: %s (%v) above %s (%v)", f.Inputs[i-1].Name, swing(i-1), f.Inputs[i].Name, swing(i))
		}
	}
}

// TestCertaintyNoneNote: a confidence of the price of certainty without a
// plan is explained: by the scenarios in which no plan of the design
// within the machine bound meets the SLOs when they alone rule it out,
// else by no one plan passing that many; nothing when every level has a
// plan.
func TestCertaintyNoneNote(t *testing.T) {
	scen := make([]search.ScenarioOptimum, 32)
	for i := range scen {
		scen[i].Found = i >= 2 // two scenarios with no plan
	}
	d := search.RobustDesign{Design: "Splitwise X / Y", Scenarios: scen, Certainty: []search.CertaintyLevel{
		{Confidence: 0.9, Needed: 29, Found: true, Objective: 584},
		{Confidence: 0.95, Needed: 31},
		{Confidence: 0.99, Needed: 32},
	}}
	got := certaintyNoneNote(d, 32, 160)
	for _, want := range []string{"none at 0.95, 0.99", "in 2 of the 32 scenarios no plan of Splitwise X / Y within --max-machines (160 a pool) meets every SLO", "none passes 31"} {
		if !strings.Contains(got, want) {
			t.Errorf("note %q lacks %q", got, want)
		}
	}
	// Scenarios whose largest cluster fails an SLO nearly idle say so.
	d.Scenarios[0].FailsIdle = "P50 TBT"
	if got := certaintyNoneNote(d, 32, 160); !strings.Contains(got, "in 1 of them its largest cluster fails an SLO even with its machines nearly idle (a tenth of the load: 1 P50 TBT), so no bound on the machines helps there") {
		t.Errorf("note %q", got)
	}
	d.Scenarios[1].FailsIdle = "P90 E2E"
	if got := certaintyNoneNote(d, 32, 160); !strings.Contains(got, "in every one of them its largest cluster fails an SLO even with its machines nearly idle (a tenth of the load: 1 P50 TBT, 1 P90 E2E)") {
		t.Errorf("note %q", got)
	}
	d.Certainty[1].Needed, d.Certainty[2].Needed = 30, 30 // reachable by count
	if got := certaintyNoneNote(d, 32, 160); !strings.Contains(got, "no one plan of Splitwise X / Y within --max-machines (160 a pool) meets every SLO in 30 of the 32 scenarios") {
		t.Errorf("note %q", got)
	}
	d.Certainty = d.Certainty[:1]
	if got := certaintyNoneNote(d, 32, 160); got != "" {
		t.Errorf("every level found: note %q", got)
	}
}

// TestSensitivityCSVGoalObjective: the sensitivity rows rank and report
// the goal's own figure (an energy goal's kWh/day, not its $/h), the CSV
// has the nominal row and then one per input and step, cell for cell the
// records, and the objective_change is each row's objective against the
// nominal one's.
func TestSensitivityCSVGoalObjective(t *testing.T) {
	t.Parallel()
	for _, goal := range []search.Goal{search.GoalCost, search.GoalEnergy} {
		res, p := tinySearch(t, goal, 6, 0, 8, 20, "Splitwise-HH")
		if res.Winner < 0 {
			t.Fatalf("%s: no nominal plan", goal)
		}
		rows, err := search.Sensitivity(context.Background(), p, res, []float64{-0.25, 0.25})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := WriteSensitivityCSV(&b, res, rows); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(recs[0], ",") != SensitivityCSVHeader || len(recs) != 2+len(rows) {
			t.Fatalf("%s: header %q and %d records, want %q and %d", goal, recs[0], len(recs), SensitivityCSVHeader, 2+len(rows))
		}
		col := map[string]int{}
		for i, c := range recs[0] {
			col[c] = i
		}
		num := func(rec []string, c string) float64 {
			v, err := strconv.ParseFloat(rec[col[c]], 64)
			if err != nil {
				t.Fatalf("%s: column %s: %v", goal, c, err)
			}
			return v
		}
		if recs[1][col["input"]] != "nominal" || recs[1][col["change"]] != "0" {
			t.Fatalf("%s: first row %q, want the nominal one", goal, recs[1])
		}
		wantObj, _ := goal.Merit(res.Designs[res.Winner])
		base := num(recs[1], "objective")
		if base != wantObj {
			t.Errorf("%s: nominal objective %v, want the goal's figure %v", goal, base, wantObj)
		}
		if goal == search.GoalEnergy && base == num(recs[1], "cost_usd_per_h") {
			t.Errorf("energy goal: the objective is the plan's $/h (%v)", base)
		}
		for i, r := range rows {
			rec := recs[i+2]
			if rec[col["input"]] != r.Input.String() || num(rec, "change") != r.Change || rec[col["goal"]] != goal.String() {
				t.Errorf("%s: row %d %q, want %s %v", goal, i, rec, r.Input, r.Change)
			}
			if r.Result.Winner < 0 {
				if rec[col["found"]] != "false" || rec[col["objective"]] != "" {
					t.Errorf("%s: row %d has no plan but %q", goal, i, rec)
				}
				continue
			}
			d := r.Result.Designs[r.Result.Winner]
			v, _ := goal.Merit(d)
			if num(rec, "objective") != v || rec[col["design"]] != d.Design || num(rec, "prompt_machines") != float64(d.Best.Prompt) {
				t.Errorf("%s: row %d %q, want %s %dP objective %v", goal, i, rec, d.Design, d.Best.Prompt, v)
			}
			if got, want := num(rec, "objective_change"), (v-base)/base; math.Abs(got-want) > 1e-12 {
				t.Errorf("%s: row %d objective_change %v, want %v", goal, i, got, want)
			}
		}
	}
}
