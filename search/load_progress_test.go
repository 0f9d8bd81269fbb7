package search

import (
	"context"
	"reflect"
	"splitplan/resolve"
	"testing"

	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/slo"
	"splitplan/traces"
)

// TestRunLoadProgress: progress is told of each simulation once, in
// order 1..total with the total, and the rows are RunLoad's.
func TestRunLoadProgress(t *testing.T) {
	t.Parallel()
	clusters, w, ref := loadTestSetup(t)
	rates := []float64{1, 2, 5}
	want, err := RunLoad(context.Background(), clusters, rates, w, evaluator.Options{AbortDelayS: 30}, slo.Default(), ref, 3)
	if err != nil {
		t.Fatal(err)
	}
	var seen [][2]int
	got, err := RunLoadProgress(context.Background(), clusters, rates, w, evaluator.Options{AbortDelayS: 30}, slo.Default(), ref, 3,
		func(done, total int) { seen = append(seen, [2]int{done, total}) })
	if err != nil {
		t.Fatal(err)
	}
	// NaN fields (energy of aborted runs) compare unequal: compare what
	// prints.
	if len(got) != len(want) {
		t.Fatalf("%d rows with progress, %d without", len(got), len(want))
	}
	for i := range got {
		if got[i].Cluster != want[i].Cluster || got[i].RPS != want[i].RPS || got[i].Verdict.Pass != want[i].Verdict.Pass || got[i].Verdict.Binding != want[i].Verdict.Binding ||
			!reflect.DeepEqual(got[i].Seconds, want[i].Seconds) {
			t.Errorf("row %d differs with progress: %+v, without %+v", i, got[i], want[i])
		}
	}
	if len(seen) != 6 {
		t.Fatalf("progress called %d times for 6 simulations: %v", len(seen), seen)
	}
	for i, s := range seen {
		if s != [2]int{i + 1, 6} {
			t.Errorf("progress call %d: %v, want [%d 6]", i, s, i+1)
		}
	}
}

// loadTestSetup is what the RunLoad tests load: Splitwise-HH 2P/1T and
// Baseline-H100 ×3 serving BLOOM-176B, 20 s of coding requests, and the
// SLO reference of the profiled H100 pair.
func loadTestSetup(t *testing.T) ([]resolve.Cluster, *Workload, slo.Reference) {
	t.Helper()
	cat, tab := costpower.Default(), resolve.DefaultSource()
	var clusters []resolve.Cluster
	for _, c := range [][3]any{{"Splitwise-HH", 2, 1}, {"Baseline-H100", 3, 0}} {
		cl, err := resolve.NamedCluster(cat, tab, c[0].(string), c[1].(int), c[2].(int), "bloom-176b")
		if err != nil {
			t.Fatal(err)
		}
		clusters = append(clusters, cl)
	}
	sizes, _ := traces.Builtin("coding")
	return clusters, &Workload{Sizes: sizes, DurationS: 20}, slo.Reference{Perf: mustPair(t, tab.Table).Model()}
}
