package report

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"splitplan/evaluator/perf"
	"splitplan/internal/fuzzing"
)

// checkInputErr fails t unless err is an input error naming the file.
func checkInputErr(t *testing.T, err error, name string) {
	t.Helper()
	if !IsInput(err) || !strings.HasPrefix(err.Error(), name) {
		t.Fatalf("error is not an input error naming %s: %v", name, err)
	}
}

// fuzzRows is fuzzing.Rows for a reader of rows from a file: each input
// is written to the one file fuzz.csv in f.TempDir() and read from it by
// read; an error must be an input error naming it. (One file for every
// input of a fuzzing process: a folder per input, with its random name,
// makes the coverage differ from run to run and the fuzzer all but stall.)
func fuzzRows[T any](f *testing.F, read func(path string) ([]T, error), empty bool, check func(t *testing.T, rows []T, i int, path string)) {
	path := filepath.Join(f.TempDir(), "fuzz.csv")
	fuzzing.Rows(f, func(t *testing.T, in string) ([]T, error) {
		if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
			t.Fatal(err)
		}
		return read(path)
	}, func(t *testing.T, err error) { checkInputErr(t, err, path) }, empty,
		func(t *testing.T, rows []T, i int) { check(t, rows, i, path) })
}

// fuzzReaderRows is fuzzing.Rows for a reader of rows from an io.Reader
// named fuzz.csv; an error must be an input error naming it.
func fuzzReaderRows[T any](f *testing.F, read func(r io.Reader, name string) ([]T, error), check func(t *testing.T, rows []T, i int)) {
	fuzzing.Rows(f, func(_ *testing.T, in string) ([]T, error) { return read(strings.NewReader(in), "fuzz.csv") },
		func(t *testing.T, err error) { checkInputErr(t, err, "fuzz.csv") }, true, check)
}

// figure reports whether v is finite and zero or more, or (when none is
// allowed) NaN.
func figure(v float64, none bool) bool {
	return v >= 0 && !math.IsInf(v, 0) || none && math.IsNaN(v)
}

// addSeeds adds the first lines of the files patterns match, and each of
// extra.
func addSeeds(f *testing.F, patterns []string, extra ...string) {
	fuzzing.Seed(f, fuzzing.Heads(8, patterns...)...)
	fuzzing.Seed(f, extra...)
}

// FuzzReadPointsCSV: ReadPointsCSV never panics, its errors name the
// file, and every point it accepts has a design, counts and figures of
// zero or more, and a finite slack or none.
func FuzzReadPointsCSV(f *testing.F) {
	addSeeds(f, []string{"../testdata/cli/inputs/points-*.csv", "../testdata/cli/*.files/points.csv", "../testdata/plots/points-*.csv"},
		PointsCSVHeader+"\nSplitwise-HH,3,2,5,40,100,30,1000,true,true,ttft_p99,0.5\n",
		PointsCSVHeader+"\nSplitwise-HH,3,2,5,40,100,30,1000,true,true,capacity_bound,\n",
		PointsCSVHeader+"\nSplitwise-HH,3,2,6,40,100,30,1000,true,true,,\n",
		PointsCSVHeader+"\nSplitwise-HH,3,2,5,40,100,30,1000,true,true,ttft_p99,NaN\n",
		PointsCSVHeader+"\n,3,2,5,NaN,100,30,1000,true,true,,\n",
		PointsCSVHeader+"\n",
		"design\n",
		"",
	)
	fuzzRows(f, ReadPointsCSV, true, func(t *testing.T, pts []PointRec, i int, path string) {
		if p := pts[i]; p.Design == "" || p.Prompt < 0 || p.Token < 0 || !figure(p.RPS, false) || !figure(p.Cost, false) || !figure(p.Power, false) ||
			math.IsInf(p.Slack, 0) || p.File != path || p.Line < 2 || (i > 0 && p.Line <= pts[i-1].Line) {
			t.Fatalf("point %d violates the invariants: %+v", i, p)
		}
	})
}

// FuzzReadOptimaCSV: ReadOptimaCSV never panics, its errors name the
// file, and it accepts at least one design, each with a name, its
// machines the sum of its pools, and figures of zero or more (all NaN
// for a design with no point).
func FuzzReadOptimaCSV(f *testing.F) {
	addSeeds(f, []string{"../testdata/cli/inputs/optima-*.csv", "../testdata/cli/*.files/optima.csv", "../testdata/cli/*.files/iso-*.csv", "../testdata/plots/optima-*.csv"},
		OptimaCSVHeader+"\nSplitwise-HH,cost,3,2,5,100,30,40,45,true,ttft_p99,0.5\n",
		OptimaCSVHeader+"\nSplitwise-HH,cost,,,,,,,,false,,\n",
		OptimaCSVHeader+"\nSplitwise-HH,cost,3,2,6,100,30,40,,true,,\n",
		OptimaCSVHeader+"\nSplitwise-HH,cost,3,2,5,100,30,-40,,true,,\n",
		OptimaCSVHeader+"\n",
		"",
	)
	fuzzRows(f, ReadOptimaCSV, false, func(t *testing.T, opt []OptimumRec, i int, _ string) {
		o := opt[i]
		none := math.IsNaN(o.Cost)
		if o.Design == "" || o.Prompt < 0 || o.Token < 0 || o.Machines != o.Prompt+o.Token || !figure(o.Capacity, true) ||
			!figure(o.Cost, none) || !figure(o.Power, none) || !figure(o.RPS, none) || none && !(math.IsNaN(o.Power) && math.IsNaN(o.RPS)) {
			t.Fatalf("design %d violates the invariants: %+v", i, o)
		}
	})
}

// FuzzReadRobustCSV: ReadRobustCSV never panics, its errors name the
// file, and it accepts at least one design, each with counts and figures
// of zero or more and quantiles of zero or more or none (+Inf).
func FuzzReadRobustCSV(f *testing.F) {
	addSeeds(f, []string{"../testdata/cli/*.files/robust.csv"},
		RobustCSVHeader+"\nSplitwise-HH,cost,0.75,8,6,true,27,2,1102,true,23,6,1102,1102,329.875,6,21,23,27,3,5,8,1026,1064,1216,false,8\n",
		RobustCSVHeader+"\nSplitwise-HH,cost,0.75,8,6,false,,,,false,,,,,,,,,,,,,,,,true,0\n",
		RobustCSVHeader+"\nSplitwise-HH,cost,NaN,8,6,false,,,,false,,,,,,,,,,,,,,,,true,0\n",
		RobustCSVHeader+",nominal_passed\nSplitwise-HH,cost,0.75,8,6,true,27,2,1102,true,23,6,1102,1102,329.875,6,21,23,27,3,5,8,1026,1064,1216,false,8,5\n",
		RobustCSVHeader+",nominal_passed\nSplitwise-HH,cost,0.75,8,6,true,27,2,1102,true,23,6,1102,1102,329.875,6,21,23,27,3,5,8,1026,1064,1216,false,8,9\n",
		RobustCSVHeader+",nominal_passed,passed_exact\nSplitwise-HH,cost,0.75,8,6,true,27,2,1102,true,23,6,1102,1102,329.875,7,21,23,27,3,5,8,1026,1064,1216,false,8,5,true\n",
		RobustCSVHeader+",nominal_passed,passed_exact\nSplitwise-HH,cost,0.75,8,6,true,27,2,1102,true,23,6,1102,1102,329.875,9,21,23,27,3,5,8,1026,1064,1216,false,8,5,maybe\n",
		RobustCSVHeader+"\n",
		OptimaCSVHeader+"\n",
		"",
	)
	fuzzRows(f, ReadRobustCSV, false, func(t *testing.T, recs []RobustRec, i int, _ string) {
		r := recs[i]
		ok := figure(r.Confidence, false) && figure(r.NominalObjective, false) && figure(r.RobustObjective, false) &&
			figure(r.RobustCost, false) && figure(r.RobustPower, false) && r.Scenarios >= 0 && r.Needed >= 0 &&
			r.NominalPrompt >= 0 && r.NominalToken >= 0 && r.RobustPrompt >= 0 && r.RobustToken >= 0 && r.Passed >= 0 && r.ScenariosWon >= 0 &&
			r.NominalPassed >= -1 && r.NominalPassed <= r.Scenarios && (!r.RobustFound || r.Passed <= r.Scenarios) && (r.RobustFound || !r.PassedExact)
		for _, q := range [][3]float64{r.PromptQ, r.TokenQ, r.ObjectiveQ} {
			for _, v := range q {
				ok = ok && (figure(v, false) || math.IsInf(v, 1))
			}
		}
		if !ok {
			t.Fatalf("design %d violates the invariants: %+v", i, r)
		}
	})
}

// FuzzReadMeasuredPredictionsCSV: the reader never panics, its errors
// name the file, and every row it accepts has an id and predictions of
// zero or more, or a reason for none.
func FuzzReadMeasuredPredictionsCSV(f *testing.F) {
	head := strings.Join(MeasuredPredictionsColumns, ",") + "\n"
	fuzzing.Seed(f,
		head+"run-1,120.5,15.25,calibrated,,--max-num-seqs 64\nrun-2,,,,unknown model,\n",
		head+"\"a,b\",1,2,p,,\n",
		head+"run-1,,15,p,,\n",
		head+"run-1,NaN,15,p,,\n",
		head+",1,2,p,,\n",
		head+"run-1,1\n",
		"id,predicted_ttft_ms\n",
		head,
		"",
	)
	fuzzReaderRows(f, ReadMeasuredPredictionsCSV, func(t *testing.T, rows []MeasuredPrediction, i int) {
		p := rows[i]
		predicted := p.Reason == ""
		if p.ID == "" || !figure(p.TTFTms, !predicted) || !figure(p.TPOTms, !predicted) {
			t.Fatalf("row %d violates the invariants: %+v", i, p)
		}
	})
}

// FuzzReadValidationCSV: the reader never panics, its errors name the
// file, and every row it accepts has a model, a hardware name, counts of
// zero or more and percentages of zero or more or none (NaN).
func FuzzReadValidationCSV(f *testing.F) {
	if b, err := os.ReadFile("../testdata/cli/perf_validate_csv.stdout"); err == nil {
		f.Add(string(b))
	}
	head := strings.Join(ValidationCSVColumns, ",") + "\n"
	fuzzing.Seed(f,
		head+"bloom-176b,DGX-H100,8,3.1234,4.5,20,80,5.5,6.25\nall,all,0,,,0,0,,\n",
		head+"bloom-176b,DGX-H100,8,-3,4.5,20,80,5.5,6.25\n",
		head+"bloom-176b,,8,3,4.5,20,80,5.5,6.25\n",
		head+"bloom-176b,DGX-H100,8,Inf,4.5,20,80,5.5,6.25\n",
		head+"bloom-176b\n",
		"model,model\n",
		head,
		"",
	)
	fuzzReaderRows(f, ReadValidationCSV, func(t *testing.T, rows []perf.ValidationRow, i int) {
		if v := rows[i]; v.Model == "" || v.Hardware == "" || v.TP < 0 || v.TestRows < 0 || v.TrainRows < 0 ||
			!figure(v.PromptMAPEPct, true) || !figure(v.TokenMAPEPct, true) || !figure(v.CompatPromptMAPEPct, true) || !figure(v.CompatTokenMAPEPct, true) {
			t.Fatalf("row %d violates the invariants: %+v", i, v)
		}
	})
}

// FuzzReadLoadCSV: ReadLoadCSV never panics, its errors name the file,
// and it accepts at least one row, each with a rate of zero or more and
// latencies, slowdowns and energy of zero or more or none (NaN).
func FuzzReadLoadCSV(f *testing.F) {
	addSeeds(f, []string{"../testdata/cli/inputs/sweep.csv", "../testdata/cli/*.files/sweep.csv", "../testdata/cli/*.files/evaluate.csv", "../testdata/plots/sweep.csv"},
		strings.Join(LoadCSVHeader, ",")+"\n",
		strings.Join(LoadCSVHeader[:len(LoadCSVHeader)-2], ",")+"\n",
		strings.Join(LoadCSVHeader[:len(LoadCSVHeader)-6], ",")+"\n",
		"cluster,rps\nx,1\n",
		"",
	)
	fuzzRows(f, ReadLoadCSV, false, func(t *testing.T, rows []LoadRow, i int, _ string) {
		r := rows[i]
		ok := figure(r.RPS, false) && figure(r.AverageKW, true) && figure(r.JPerOutputToken, true) &&
			(r.Scenarios == nil || (r.Scenarios.Of >= 1 && r.Scenarios.Passed >= 0 && r.Scenarios.Passed <= r.Scenarios.Of))
		if sc := r.Scenarios; sc != nil {
			// The draw's quantiles: in order, known exactly when a
			// scenario's draw is.
			ok = ok && sc.KWKnown >= 0 && sc.KWKnown <= sc.Of
			for j := range sc.KW {
				ok = ok && figure(sc.KW[j], true) && math.IsNaN(sc.KW[j]) == (sc.KWKnown == 0) && (j == 0 || !(sc.KW[j] < sc.KW[j-1]))
			}
		}
		for k := range r.Seconds {
			ok = ok && figure(r.Seconds[k], true) && figure(r.Slowdowns[k], true)
		}
		if !ok {
			t.Fatalf("row %d violates the invariants: %+v", i, r)
		}
	})
}
