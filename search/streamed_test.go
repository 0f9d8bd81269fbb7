package search

import (
	"context"
	"math"
	"reflect"
	"runtime"
	"testing"
)

// TestDropPointsChangesNothing: an exhaustive search that keeps only what
// it reports (DropPoints) reports the same designs — optima, closest
// points, counts — as one that keeps every point, with and without
// stopping failing simulations, when something is found and when nothing
// is (the closest point then comes from completed stopped simulations).
func TestDropPointsChangesNothing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		p    func() *Problem
	}{
		{"cost coding 12 req/s", func() *Problem { return problem(t, GoalCost, "coding", 12, 8, 30, allDesigns...) }},
		{"power conversation 8 req/s, two seeds", func() *Problem {
			p := problem(t, GoalPower, "conversation", 8, 8, 30, "Baseline-H100", "Splitwise-HA", "Splitwise-HHcap")
			p.Seeds = 2
			return p
		}},
		{"energy coding 12 req/s", func() *Problem {
			return problem(t, GoalEnergy, "coding", 12, 6, 30, "Baseline-H100", "Splitwise-HH")
		}},
		{"tco coding 12 req/s", func() *Problem {
			return problem(t, GoalTCO, "coding", 12, 6, 30, "Baseline-A100", "Splitwise-HA")
		}},
		{"cost coding 60 req/s on 4 machines: nothing found", func() *Problem {
			return problem(t, GoalCost, "coding", 60, 2, 30, "Baseline-H100", "Splitwise-HH")
		}},
		{"energy coding 60 req/s on 4 machines: nothing found", func() *Problem {
			return problem(t, GoalEnergy, "coding", 60, 2, 30, "Baseline-H100", "Splitwise-HH")
		}},
	}
	for _, tc := range cases {
		for _, stop := range []bool{false, true} {
			t.Run(tc.name, func(t *testing.T) {
				keep := tc.p()
				keep.Exhaustive, keep.StopFailing = true, stop
				want, err := Run(context.Background(), keep)
				if err != nil {
					t.Fatal(err)
				}
				drop := tc.p()
				drop.Exhaustive, drop.StopFailing, drop.DropPoints = true, stop, true
				got, err := Run(context.Background(), drop)
				if err != nil {
					t.Fatal(err)
				}
				if len(got.Points) != 0 {
					t.Errorf("DropPoints kept %d points", len(got.Points))
				}
				if len(want.Points) == 0 {
					t.Fatal("the search kept no point: the case tests nothing")
				}
				if got.Winner != want.Winner || len(got.Designs) != len(want.Designs) {
					t.Fatalf("winner %d of %d designs, want %d of %d", got.Winner, len(got.Designs), want.Winner, len(want.Designs))
				}
				for i := range want.Designs {
					if !reflect.DeepEqual(got.Designs[i], want.Designs[i]) {
						t.Errorf("%s:\n got %+v\nwant %+v", want.Designs[i].Design, got.Designs[i], want.Designs[i])
					}
				}
			})
		}
	}
}

// TestExhaustiveMemoryBounded: an exhaustive search of one design of up
// to 100 machines a pool (10,000 simulations), not keeping its points, runs
// with a bounded number of goroutines (not one per point waiting its
// turn: about 8 KB of stack each) and its live heap does not grow with
// the simulations (a point kept is about 1 KB: 10 MB here, 500 MB for
// optimize --gpus h100 --exhaustive).
//
// The live heap is sampled every 250 simulations while the workers run,
// so each sample also holds whatever simulations are in flight (up to a
// few MB, more on a loaded machine). In-flight state only adds, so each
// window's figure is its smallest sample: the heap after the 2,000th to
// the 4,000th simulation against the heap after the 8,000th to the
// 10,000th. One design, so that no design's setup (its workload, its
// performance models) falls between the windows: with several designs
// two at a time, which designs are alive at a sample depends on the
// machine's load. The same search keeping its points is the control: it
// must grow by more than the limit, or the test could not fail.
func TestExhaustiveMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("thousands of simulations")
	}
	const limit = int64(2 << 20)
	keep := exhaustiveHeapGrowth(t, false)
	drop := exhaustiveHeapGrowth(t, true)
	if keep <= limit {
		t.Errorf("keeping every point grew the live heap by only %.2f MB, not more than %d MB: the measurement cannot see kept points", float64(keep)/(1<<20), limit>>20)
	}
	if drop > limit {
		t.Errorf("live heap grew %.2f MB over 6,000 simulations, more than %d MB: points are kept", float64(drop)/(1<<20), limit>>20)
	}
}

// exhaustiveHeapGrowth runs the exhaustive search of
// TestExhaustiveMemoryBounded, keeping its points or not, checks its
// goroutines are bounded, and returns how much its live heap grew from
// the 2,000th–4,000th simulations to the 8,000th–10,000th (the smallest
// sample of each window).
func exhaustiveHeapGrowth(t *testing.T, dropPoints bool) int64 {
	t.Helper()
	p := problem(t, GoalCost, "coding", 0.5, 100, 10, "Splitwise-HA")
	p.Exhaustive, p.DropPoints, p.StopFailing = true, dropPoints, true
	live := func() int64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	early, late := int64(math.MaxInt64), int64(math.MaxInt64)
	goroutines, samples := 0, 0
	p.Progress = func(pr Progress) {
		goroutines = max(goroutines, runtime.NumGoroutine())
		if pr.Finished != "" || pr.Simulations%250 != 0 {
			return
		}
		// From the 2,000th simulation on, when the workload and the
		// performance models are in place.
		switch n := pr.Simulations; {
		case n >= 2000 && n <= 4000:
			early = min(early, live())
			samples++
		case n >= 8000 && n <= 10000:
			late = min(late, live())
			samples++
		}
	}
	before := runtime.NumGoroutine()
	res, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	sims := 0
	for _, d := range res.Designs {
		sims += d.Simulations
	}
	if sims < 10000 || early == math.MaxInt64 || late == math.MaxInt64 {
		t.Fatalf("%d simulations, %d samples: the space should hold 10,000 points", sims, samples)
	}
	grew := late - early
	t.Logf("keep points %v: %d simulations, at most %d goroutines (%d before); smallest live heap %+.2f MB from the 2,000th–4,000th simulations to the 8,000th–10,000th (%d samples)",
		!dropPoints, sims, goroutines, before, float64(grew)/(1<<20), samples)
	if limit := before + 4*(p.Parallel+2) + 8; goroutines > limit {
		t.Errorf("%d goroutines while searching, more than %d", goroutines, limit)
	}
	return grew
}
