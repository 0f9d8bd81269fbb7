package report

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"splitplan/evaluator/perf"
	"splitplan/search"
	"splitplan/slo"
	"splitplan/traces"
)

// same reports whether a and b are equal, NaN equal to NaN.
func same(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

// roundStats is s as WriteTraceStatsCSV writes it: 4 decimal places.
func roundStats(s traces.Stats) traces.Stats {
	s.DurationS, s.RateRPS = traceRound4(s.DurationS), traceRound4(s.RateRPS)
	for _, x := range []*traces.Summary{&s.Prompt, &s.Output} {
		x.Mean, x.P50, x.P90, x.P99 = traceRound4(x.Mean), traceRound4(x.P50), traceRound4(x.P90), traceRound4(x.P99)
	}
	return s
}

func TestTraceStatsCSVRoundTrip(t *testing.T) {
	t.Parallel()
	var cases []traces.Stats
	for _, name := range traces.BuiltinNames() {
		d, err := traces.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		reqs, err := traces.Synthesize(d, 7.3, 30, 1, false)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, traces.Summarize(reqs), d.Stats())
	}
	cases = append(cases, traces.Stats{}, traces.Summarize([]traces.Request{{Arrival: 2.5, PromptTokens: 7, OutputTokens: 1}}))
	rounded := 0
	for i, s := range cases {
		var buf bytes.Buffer
		if err := WriteTraceStatsCSV(&buf, s); err != nil {
			t.Fatal(err)
		}
		got, err := ReadTraceStatsCSV(bytes.NewReader(buf.Bytes()), "stats.csv")
		if err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, buf.String())
		}
		want := roundStats(s)
		if got != want {
			t.Errorf("case %d: read back\n%+v\nwant (rounded)\n%+v", i, got, want)
		}
		if want != s {
			rounded++
		}
		var again bytes.Buffer
		WriteTraceStatsCSV(&again, got)
		if again.String() != buf.String() {
			t.Errorf("case %d: rewriting what was read changed the file:\n%s\n%s", i, buf.String(), again.String())
		}
	}
	if rounded == 0 {
		t.Error("no case needed rounding: the test does not check that the reader returns the rounded values")
	}
}

func TestReadTraceStatsCSVErrors(t *testing.T) {
	t.Parallel()
	head := strings.Join(TraceStatsColumns, ",")
	row := "100,9.5,10.5263,1500.25,1200,3000,7000.5,8000,20.5,13,44,120,200"
	if s, err := ReadTraceStatsCSV(strings.NewReader(head+"\n"+row+"\n"), "ok.csv"); err != nil {
		t.Fatal(err)
	} else if s.Requests != 100 || s.RateRPS != 10.5263 || s.Prompt.P99 != 7000.5 || s.Output.Max != 200 || s.Output.Mean != 20.5 {
		t.Fatalf("read %+v", s)
	}
	field := func(i int, v string) string {
		f := strings.Split(row, ",")
		f[i] = v
		return head + "\n" + strings.Join(f, ",") + "\n"
	}
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"empty", "", []string{"s.csv", "empty file", "requests,duration_s"}},
		{"missing columns", strings.Replace(head, ",prompt_p90", "", 1) + "\n", []string{"s.csv:1", "lacks the columns prompt_p90"}},
		{"extra column", head + ",x\n" + row + ",1\n", []string{"s.csv:1", `unexpected columns "x"`}},
		{"reordered", strings.Replace(head, "prompt_p50,prompt_p90", "prompt_p90,prompt_p50", 1) + "\n" + row + "\n", []string{"s.csv:1", "column 5 is not prompt_p50"}},
		{"no row", head + "\n", []string{"s.csv", "0 rows", "one row"}},
		{"two rows", head + "\n" + row + "\n" + row + "\n", []string{"s.csv", "2 rows"}},
		{"requests", field(0, "ten"), []string{"s.csv:2", "column requests (1)", `"ten"`, "whole number"}},
		{"negative", field(1, "-3"), []string{"s.csv:2", "column duration_s (2)", "zero or more"}},
		{"max not whole", field(12, "200.5"), []string{"column output_max (13)", "whole number"}},
		{"percentiles out of order", field(5, "900"), []string{"s.csv:2", "column prompt_p90 (6)", "at least prompt_p50 (1200)"}},
		{"max below p99", field(6, "8000.5"), []string{"column prompt_max (8)", "at least prompt_p99 (8000.5)"}},
		{"short row", head + "\n1,2\n", []string{"s.csv:2", "wrong number of fields"}},
	} {
		_, err := ReadTraceStatsCSV(strings.NewReader(tc.in), "s.csv")
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if !IsInput(err) {
			t.Errorf("%s: %v is not an InputError", tc.name, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tc.name, err, w)
			}
		}
	}
}

func TestValidationCSVRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 2))
	var rows []perf.ValidationRow
	for i := range 12 {
		rows = append(rows, perf.ValidationRow{Model: []string{"bloom-176b", "llama2-70b"}[i%2], Hardware: []string{"a100", "h100"}[i/2%2],
			TP: 1 << (i % 4), PromptMAPEPct: rng.Float64() * 40, TokenMAPEPct: rng.Float64() * 10, TestRows: rng.IntN(50), TrainRows: rng.IntN(200),
			CompatPromptMAPEPct: rng.ExpFloat64() * 20, CompatTokenMAPEPct: rng.Float64()})
	}
	rows = append(rows, perf.ValidationRow{Model: perf.AllPairs, Hardware: perf.AllPairs, TestRows: 300, TrainRows: 1200, PromptMAPEPct: 12.34565})
	var buf bytes.Buffer
	if err := WriteValidationCSV(&buf, rows); err != nil {
		t.Fatal(err)
	}
	// A pair with no row held out (NaN errors) is written empty and read
	// back as NaN.
	nan := math.NaN()
	var nbuf bytes.Buffer
	if err := WriteValidationCSV(&nbuf, []perf.ValidationRow{{Model: "m", Hardware: "h", TP: 1, TrainRows: 1, PromptMAPEPct: nan, TokenMAPEPct: nan, CompatPromptMAPEPct: nan, CompatTokenMAPEPct: nan}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(nbuf.String(), "m,h,1,,,0,1,,") {
		t.Errorf("no test rows written as %q", nbuf.String())
	}
	if back, err := ReadValidationCSV(bytes.NewReader(nbuf.Bytes()), "v.csv"); err != nil || !math.IsNaN(back[0].PromptMAPEPct) || !math.IsNaN(back[0].CompatTokenMAPEPct) {
		t.Errorf("read back %+v, %v", back, err)
	}
	got, err := ReadValidationCSV(bytes.NewReader(buf.Bytes()), "validate.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("read %d rows, wrote %d", len(got), len(rows))
	}
	r4 := func(x float64) float64 { return math.Round(x*1e4) / 1e4 }
	for i, w := range rows {
		w.PromptMAPEPct, w.TokenMAPEPct = r4(w.PromptMAPEPct), r4(w.TokenMAPEPct)
		w.CompatPromptMAPEPct, w.CompatTokenMAPEPct = r4(w.CompatPromptMAPEPct), r4(w.CompatTokenMAPEPct)
		if got[i] != w {
			t.Errorf("row %d read back as\n%+v\nwant (rounded)\n%+v", i, got[i], w)
		}
	}
	var again bytes.Buffer
	WriteValidationCSV(&again, got)
	if again.String() != buf.String() {
		t.Error("rewriting what was read changed the file")
	}
	// Errors.
	head := strings.Join(ValidationCSVColumns, ",")
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"missing", "model,hardware,tp\n", []string{"v.csv:1", "lacks the columns prompt_mape_pct, token_mape_pct, test_rows"}},
		{"tp", head + "\nm,h,eight,1,1,1,1,1,1\n", []string{"v.csv:2", "column tp (3)", `"eight"`, "whole number"}},
		{"mape", head + "\nm,h,8,1,NaN,1,1,1,1\n", []string{"v.csv:2", "column token_mape_pct (5)", "number of zero or more"}},
		{"model", head + "\n,h,8,1,1,1,1,1,1\n", []string{"v.csv:2", "column model (1)", "a model name"}},
	} {
		_, err := ReadValidationCSV(strings.NewReader(tc.in), "v.csv")
		if err == nil || !IsInput(err) {
			t.Errorf("%s: error %v, want an InputError", tc.name, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tc.name, err, w)
			}
		}
	}
}

// writeTemp writes a file with write and returns its path.
func writeTemp(t *testing.T, name string, write func(f *os.File) error) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := write(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestOptimaCSVRoundTrip: a real search's optima, written and read back,
// are OptimaOf's. A design with no optimum is written as the point that
// failed closest to passing, so its row is compared with that point.
func TestOptimaCSVRoundTrip(t *testing.T) {
	t.Parallel()
	type run struct {
		res *search.Result
		p   *search.Problem
	}
	var runs []run
	for _, goal := range []search.Goal{search.GoalCost, search.GoalThroughput} {
		rate, power := 6.0, 0.0
		if goal == search.GoalThroughput {
			rate, power = 0, 5*11.375
		}
		res, p := tinySearch(t, goal, rate, power, 3, 15, "Baseline-H100", "Splitwise-HH", "Splitwise-AA")
		runs = append(runs, run{res, p})
	}
	found, notFound := 0, 0
	for _, r := range runs {
		path := writeTemp(t, "optima.csv", func(f *os.File) error { return WriteOptimaCSV(f, r.res, r.p.SLO) })
		got, err := ReadOptimaCSV(path)
		if err != nil {
			t.Fatal(err)
		}
		want := OptimaOf(r.res)
		if len(got) != len(want) {
			t.Fatalf("%s: read %d designs, OptimaOf %d", r.res.Goal, len(got), len(want))
		}
		for i, w := range want {
			d := r.res.Designs[i]
			if !d.Found {
				notFound++
				if d.Closest == nil {
					t.Fatalf("%s: %s found nothing and has no closest point", r.res.Goal, d.Design)
				}
				// OptimaOf leaves the zero point here; the CSV holds the
				// closest point.
				c := d.Closest
				w.Prompt, w.Token, w.Machines, w.Cost, w.Power, w.RPS = c.Prompt, c.Token, c.Machines(), c.CostUSDPerH, c.PowerKW, c.RateRPS
			} else {
				found++
			}
			g := got[i]
			if g.Design != w.Design || g.Goal != w.Goal || g.Prompt != w.Prompt || g.Token != w.Token || g.Machines != w.Machines ||
				g.Cost != w.Cost || g.Power != w.Power || g.RPS != w.RPS || !same(g.Capacity, w.Capacity) ||
				g.Feasible != w.Feasible || g.Baseline != w.Baseline || g.Throughput() != w.Throughput() {
				t.Errorf("%s: design %d read back as\n%+v\nwant\n%+v", r.res.Goal, i, g, w)
			}
		}
	}
	if found == 0 || notFound == 0 {
		t.Errorf("the searches found %d optima and missed %d: both kinds of row must be checked", found, notFound)
	}
	// A machines column that is not prompt + token is refused, naming it.
	bad := filepath.Join(t.TempDir(), "bad.csv")
	os.WriteFile(bad, []byte(OptimaCSVHeader+"\nSplitwise-HH,cost,3,2,9,100,30,6,,true,,\n"), 0o644)
	if _, err := ReadOptimaCSV(bad); err == nil || !strings.Contains(err.Error(), "column machines") || !strings.Contains(err.Error(), "prompt_machines + token_machines (5)") {
		t.Errorf("machines 9 of 3 + 2: %v", err)
	}
	os.WriteFile(bad, []byte("design,goal,confidence,scenarios,needed,nominal_found,nominal_prompt,nominal_token,robust_found,robust_prompt,robust_token\nSplitwise-HH,cost,0.9,2,2,true,3,1,true,3,2\n"), 0o644)
	if _, err := ReadOptimaCSV(bad); err == nil || !strings.Contains(err.Error(), "optimize --confidence's robust table") {
		t.Errorf("a robust table read as optima: %v", err)
	}
	os.WriteFile(bad, []byte(PointsCSVHeader+"\nSplitwise-HH,3,2,4,6,100,30,720,true,true,,\n"), 0o644)
	if _, err := ReadPointsCSV(bad); err == nil || !strings.Contains(err.Error(), "column machines") {
		t.Errorf("points machines 4 of 3 + 2: %v", err)
	}
}

// TestPointsCSVRoundTrip: a real search's points, plus a pruned point and a
// point without a verdict (the batch goal's), read back as PointsOf's.
func TestPointsCSVRoundTrip(t *testing.T) {
	t.Parallel()
	res, p := tinySearch(t, search.GoalThroughput, 0, 5*11.375, 3, 10, "Baseline-H100", "Splitwise-HH")
	res.Points = append(res.Points,
		search.Point{Design: "Splitwise-HH", Prompt: 1, Token: 1, RateRPS: 9.25, CostUSDPerH: 76, PowerKW: 22.75, Pruned: true, Note: "analytic bound: at most 3.1 req/s"},
		search.Point{Design: "Splitwise-HH", Prompt: 1, Token: 2, RateRPS: 3.5, CostUSDPerH: 114, PowerKW: 34.125, Requests: 30, Simulated: true},
		search.Point{Design: "Splitwise-HH", Prompt: 2, Token: 2, RateRPS: 3.5, CostUSDPerH: 152, PowerKW: 45.5, Requests: 30, Simulated: true, Feasible: true})
	path := writeTemp(t, "points.csv", func(f *os.File) error { return WritePointsCSV(f, res, p.SLO) })
	got, err := ReadPointsCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	want := PointsOf(res)
	if len(got) != len(want) {
		t.Fatalf("read %d points, PointsOf %d", len(got), len(want))
	}
	feasible, infeasible, slack, drainedFail := 0, 0, 0, 0
	for i, w := range want {
		// PointsOf leaves Binding empty for a point without a verdict,
		// where the CSV names capacity_bound (pruned) or drain (failed).
		if pt := res.Points[i]; pt.Verdict == nil {
			switch {
			case pt.Pruned:
				w.Binding = "capacity_bound"
			case !pt.Feasible:
				w.Binding = "drain"
			}
		}
		w.File, w.Line = path, i+2
		g := got[i]
		if g.Design != w.Design || g.Prompt != w.Prompt || g.Token != w.Token || g.RPS != w.RPS || g.Cost != w.Cost ||
			g.Power != w.Power || g.Feasible != w.Feasible || g.Pruned != w.Pruned || g.Binding != w.Binding ||
			!same(g.Slack, w.Slack) || g.File != w.File || g.Line != w.Line {
			t.Errorf("point %d read back as\n%+v\nwant\n%+v", i, g, w)
		}
		if w.Feasible {
			feasible++
		} else {
			infeasible++
		}
		if !math.IsNaN(w.Slack) {
			slack++
		}
		if pt := res.Points[i]; pt.Verdict != nil && pt.Verdict.Drained && !pt.Feasible {
			drainedFail++
		}
	}
	if feasible == 0 || infeasible == 0 || slack == 0 || drainedFail == 0 {
		t.Errorf("too tame: %d feasible, %d infeasible, %d with a slack, %d failed an SLO", feasible, infeasible, slack, drainedFail)
	}
}

// TestReadPointsCSVSlack: a points CSV's binding_slack is a finite number,
// negative for a failing point, or empty for none; the text "NaN" or
// "Inf" is refused naming the cell, not read as none.
func TestReadPointsCSVSlack(t *testing.T) {
	t.Parallel()
	row := func(slack string) string {
		return PointsCSVHeader + "\nSplitwise-HH,2,1,3,5,114,34.125,30,false,true,ttft_p99," + slack + "\n"
	}
	for _, tc := range []struct {
		slack string
		want  float64 // NaN: none
		err   bool
	}{{"-0.25", -0.25, false}, {"0.5", 0.5, false}, {"", math.NaN(), false}, {"NaN", 0, true}, {"Inf", 0, true}, {"-inf", 0, true}, {"x", 0, true}} {
		path := writeTemp(t, "points.csv", func(f *os.File) error { _, err := f.WriteString(row(tc.slack)); return err })
		got, err := ReadPointsCSV(path)
		switch {
		case tc.err && err == nil:
			t.Errorf("slack %q: read %+v, want an error", tc.slack, got)
		case tc.err && (!IsInput(err) || !strings.Contains(err.Error(), "binding_slack") || !strings.Contains(err.Error(), path+":2")):
			t.Errorf("slack %q: error %v does not name the cell", tc.slack, err)
		case !tc.err && err != nil:
			t.Errorf("slack %q: %v", tc.slack, err)
		case !tc.err && !same(got[0].Slack, tc.want):
			t.Errorf("slack %q read as %v, want %v", tc.slack, got[0].Slack, tc.want)
		}
	}
}

// TestLoadCSVRoundTrip: sweep rows with every figure, and aborted rows
// without figures, read back with the same figures, verdict and abort.
func TestLoadCSVRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 9))
	var rows []LoadRow
	for i := range 20 {
		r := LoadRow{Cluster: []string{"Baseline-H100 ×4", "Splitwise-HH 3P/2T"}[i%2], RPS: float64(i+1) * 0.7}
		r.Aborted = i%7 == 6
		for k := range r.Seconds {
			r.Seconds[k], r.Slowdowns[k] = rng.ExpFloat64(), 1+rng.ExpFloat64()
			if r.Aborted {
				r.Seconds[k], r.Slowdowns[k] = math.NaN(), math.NaN()
			}
		}
		r.Verdict = slo.Verdict{Drained: !r.Aborted, Pass: !r.Aborted && rng.IntN(2) == 0}
		if r.Verdict.Pass && i%3 != 0 {
			r.Verified = &search.Verification{DurationS: 900, Pass: i%3 == 1, StopLimit: "P90 TBT", StopS: 411}
		}
		if i%4 != 0 {
			r.Scenarios = &search.ScenarioCount{Passed: rng.IntN(33), Of: 32, KW: [3]float64{math.NaN(), math.NaN(), math.NaN()}}
			if i%5 != 0 {
				lo := 100 * rng.Float64()
				r.Scenarios.KW, r.Scenarios.KWKnown = [3]float64{lo, lo + rng.Float64(), lo + 2}, 1+rng.IntN(32)
			}
		}
		rows = append(rows, r)
	}
	path := writeTemp(t, "sweep.csv", func(f *os.File) error { return WriteLoadCSV(f, rows) })
	got, err := ReadLoadCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("read %d rows, wrote %d", len(got), len(rows))
	}
	for i, w := range rows {
		g := got[i]
		ok := g.Cluster == w.Cluster && g.RPS == w.RPS && g.Verdict.Pass == w.Verdict.Pass && g.Aborted == w.Aborted
		for k := range w.Seconds {
			ok = ok && same(g.Seconds[k], w.Seconds[k]) && same(g.Slowdowns[k], w.Slowdowns[k])
		}
		ok = ok && same(g.AverageKW, w.AverageKW) && same(g.JPerOutputToken, w.JPerOutputToken)
		ok = ok && (g.Verified == nil) == (w.Verified == nil) && g.Pass() == w.Pass()
		if w.Verified != nil {
			ok = ok && g.Verified.DurationS == w.Verified.DurationS && g.Verified.Pass == w.Verified.Pass
		}
		ok = ok && (g.Scenarios == nil) == (w.Scenarios == nil)
		if w.Scenarios != nil {
			ok = ok && g.Scenarios.Passed == w.Scenarios.Passed && g.Scenarios.Of == w.Scenarios.Of && g.Scenarios.KWKnown == w.Scenarios.KWKnown
			for j := range w.Scenarios.KW {
				ok = ok && same(g.Scenarios.KW[j], w.Scenarios.KW[j])
			}
		}
		if !ok {
			t.Errorf("row %d read back as\n%+v\nwant\n%+v", i, g, w)
		}
	}
	// What was read writes the same file, but for the binding SLO, which
	// the reader does not keep.
	var a, b bytes.Buffer
	WriteLoadCSV(&a, rows)
	WriteLoadCSV(&b, got)
	strip := func(s string) []string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			f := strings.Split(l, ",")
			if len(f) == len(LoadCSVHeader) {
				// binding_slo, verified_slo and verified_slack
				n := len(f)
				f = append(append(f[:n-13:n-13], f[n-12:n-8]...), f[n-6:]...)
			}
			out = append(out, strings.Join(f, ","))
		}
		return out
	}
	if !reflect.DeepEqual(strip(a.String()), strip(b.String())) {
		t.Error("rewriting what was read changed the file")
	}
}

// TestLoadCSVBadScenarios: a scenario count that is not a whole number,
// or passes more scenarios than it has, and a draw across the scenarios
// out of order, beyond the scenarios or present without a known count,
// are refused naming the cell.
func TestLoadCSVBadScenarios(t *testing.T) {
	t.Parallel()
	r := LoadRow{Cluster: "Splitwise-HH 3P/2T", RPS: 1, Verdict: slo.Verdict{Drained: true, Pass: true},
		Scenarios: &search.ScenarioCount{Passed: 3, Of: 4, KW: [3]float64{120, 130, 140}, KWKnown: 4}}
	for k := range r.Seconds {
		r.Seconds[k], r.Slowdowns[k] = 1, 1
	}
	var good bytes.Buffer
	if err := WriteLoadCSV(&good, []LoadRow{r}); err != nil {
		t.Fatal(err)
	}
	const tail = ",3,4,120,130,140,4"
	if !strings.HasSuffix(strings.TrimSpace(good.String()), tail) {
		t.Fatalf("the row does not end with its scenario count and draws:\n%s", good.String())
	}
	for _, tc := range []struct{ tail, col string }{
		{",3.5,4,120,130,140,4", "scenarios_passed"}, {",5,4,120,130,140,4", "scenarios_passed"}, {",0,0,120,130,140,4", "scenarios"},
		{",-1,4,120,130,140,4", "scenarios_passed"}, {",3,,120,130,140,4", "scenarios"},
		{",3,4,120,130,140,5", "scenario_avg_kw_known"}, {",3,4,120,130,140,x", "scenario_avg_kw_known"},
		{",3,4,120,110,140,4", "scenario_avg_kw_p50"}, {",3,4,120,130,125,4", "scenario_avg_kw_p90"},
		{",3,4,120,130,140,0", "scenario_avg_kw_p10"}, {",3,4,,130,140,2", "scenario_avg_kw_p10"}, {",3,4,120,130,-1,4", "scenario_avg_kw_p90"},
	} {
		text := strings.TrimSuffix(strings.TrimSpace(good.String()), tail) + tc.tail + "\n"
		path := writeTemp(t, "sweep.csv", func(f *os.File) error { _, err := f.WriteString(text); return err })
		_, err := ReadLoadCSV(path)
		if err == nil || !IsInput(err) || !strings.Contains(err.Error(), path+":2") || !strings.Contains(err.Error(), "column "+tc.col+" ") {
			t.Errorf("scenario cells %q: error %v, want one naming %s:2 and column %s", tc.tail, err, path, tc.col)
		}
	}
	rows, err := ReadLoadCSV(writeTemp(t, "sweep.csv", func(f *os.File) error { _, err := f.Write(good.Bytes()); return err }))
	if err != nil || rows[0].Scenarios.KW != r.Scenarios.KW || rows[0].Scenarios.KWKnown != 4 {
		t.Errorf("read back: %v, %+v", err, rows)
	}
}

// TestCSVPartialColumnGroups: columns written together (a sweep CSV's
// energy, check and scenario columns, a GPU-pairs CSV's energy ones)
// are read together or not at all; a file with one of a group is refused
// at its header, naming what it lacks, instead of read from another
// column.
func TestCSVPartialColumnGroups(t *testing.T) {
	t.Parallel()
	r := LoadRow{Cluster: "Splitwise-HH 3P/2T", RPS: 1, Verdict: slo.Verdict{Drained: true, Pass: true}, AverageKW: 10, JPerOutputToken: 2,
		Verified: &search.Verification{DurationS: 900, Pass: true}, Scenarios: &search.ScenarioCount{Passed: 3, Of: 4}}
	for k := range r.Seconds {
		r.Seconds[k], r.Slowdowns[k] = 1, 1
	}
	var good bytes.Buffer
	if err := WriteLoadCSV(&good, []LoadRow{r}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLoadCSV(writeTemp(t, "whole.csv", func(f *os.File) error { _, err := f.Write(good.Bytes()); return err })); err != nil {
		t.Fatalf("the whole file: %v", err)
	}
	// drop removes column col from every line.
	drop := func(text, col string) string {
		lines := strings.Split(strings.TrimSpace(text), "\n")
		j := slices.Index(strings.Split(lines[0], ","), col)
		if j < 0 {
			t.Fatalf("no column %s", col)
		}
		for i, l := range lines {
			f := strings.Split(l, ",")
			lines[i] = strings.Join(append(f[:j:j], f[j+1:]...), ",")
		}
		return strings.Join(lines, "\n") + "\n"
	}
	for _, tc := range []struct{ drop, lacks string }{
		{"j_per_output_token", "j_per_output_token"}, {"avg_kw", "avg_kw"},
		{"verified_s", "verified_s"}, {"verified_pass", "verified_pass"},
		{"scenarios", "scenarios"}, {"scenarios_passed", "scenarios_passed"}, {"scenario_avg_kw_p50", "scenario_avg_kw_p50"},
	} {
		path := writeTemp(t, "sweep.csv", func(f *os.File) error { _, err := f.WriteString(drop(good.String(), tc.drop)); return err })
		_, err := ReadLoadCSV(path)
		if err == nil || !IsInput(err) || !strings.Contains(err.Error(), path+":1") || !strings.Contains(err.Error(), "without "+tc.lacks) {
			t.Errorf("without %s: error %v, want one naming %s:1 and what it lacks", tc.drop, err, path)
		}
	}
	// The draws without the counts they come with.
	noCounts := writeTemp(t, "sweep.csv", func(f *os.File) error {
		_, err := f.WriteString(drop(drop(good.String(), "scenarios"), "scenarios_passed"))
		return err
	})
	if _, err := ReadLoadCSV(noCounts); err == nil || !IsInput(err) || !strings.Contains(err.Error(), noCounts+":1") || !strings.Contains(err.Error(), "without scenarios_passed, scenarios") {
		t.Errorf("the draws without the counts: %v", err)
	}
	// A group dropped whole reads as an older file.
	old := good.String()
	for _, col := range []string{"scenarios", "scenarios_passed", "scenario_avg_kw_p10", "scenario_avg_kw_p50", "scenario_avg_kw_p90", "scenario_avg_kw_known"} {
		old = drop(old, col)
	}
	rows, err := ReadLoadCSV(writeTemp(t, "old.csv", func(f *os.File) error { _, err := f.WriteString(old); return err }))
	if err != nil || len(rows) != 1 || rows[0].Scenarios != nil || rows[0].AverageKW != 10 {
		t.Errorf("without the scenario columns: %v, %+v", err, rows)
	}

	var pairs bytes.Buffer
	if err := WritePairsCSV(&pairs, []PairRec{{PromptGPU: "H100", TokenGPU: "H100", Status: "none", Designs: 1, Design: "Splitwise-HH", KWhPerDay: 5, OwnershipUSDPerH: 6}}); err != nil {
		t.Fatal(err)
	}
	path := writeTemp(t, "pairs.csv", func(f *os.File) error {
		_, err := f.WriteString(drop(pairs.String(), "ownership_usd_per_h"))
		return err
	})
	if _, err := ReadPairsCSV(path); err == nil || !IsInput(err) || !strings.Contains(err.Error(), "without ownership_usd_per_h") {
		t.Errorf("a GPU-pairs CSV without ownership_usd_per_h: %v", err)
	}
}
