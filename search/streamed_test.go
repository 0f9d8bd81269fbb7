package search

import (
	"context"
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

// TestExhaustiveMemoryBounded: an exhaustive search of 4 designs of up to
// 60 machines a pool (10,860 simulations), not keeping its points, runs
// with a bounded number of goroutines (not one per point waiting its
// turn: about 8 KB of stack each) and its live heap does not grow with
// the simulations (a point kept is about 1 KB: 10 MB here, 500 MB for
// optimize --gpus h100 --exhaustive).
func TestExhaustiveMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("thousands of simulations")
	}
	p := problem(t, GoalCost, "coding", 0.5, 60, 10, "Baseline-H100", "Splitwise-HH", "Splitwise-AA", "Splitwise-HA")
	p.Exhaustive, p.DropPoints, p.StopFailing = true, true, true
	live := func() int64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	var first, last int64
	goroutines, samples := 0, 0
	p.Progress = func(pr Progress) {
		goroutines = max(goroutines, runtime.NumGoroutine())
		if pr.Simulations%2000 == 0 && pr.Finished == "" {
			// After the first 2,000 simulations, when the workload and
			// the performance models are in place.
			if samples++; samples == 1 {
				first = live()
			}
			last = live()
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
	if sims < 10000 || samples < 4 {
		t.Fatalf("%d simulations, %d samples: the space should hold 10,860 points", sims, samples)
	}
	grew := last - first
	t.Logf("%d simulations: at most %d goroutines (%d before); live heap %+.2f MB from the 2,000th simulation to the %d,000th",
		sims, goroutines, before, float64(grew)/(1<<20), 2*samples)
	if limit := before + 4*(p.Parallel+2) + 8; goroutines > limit {
		t.Errorf("%d goroutines while searching, more than %d", goroutines, limit)
	}
	if limit := int64(2 << 20); grew > limit {
		t.Errorf("live heap grew %.2f MB over %d simulations, more than %d MB: points are kept", float64(grew)/(1<<20), 2000*(samples-1), limit>>20)
	}
}
