package search

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"splitplan/evaluator/perf/errmodel"
)

// proofPoints are the points whose simulations show that opt is design
// d's optimum in d's scenario, found knowing opt: opt itself, and the
// fewest failing points whose down-sets cover every point of the design
// space that costs less (feasibility grows with either machine count, so
// a failing point proves every point it dominates). It is the least any
// search that returns the exact per-scenario optima must simulate, given
// them in advance. Finding them walks the scenario's infeasible frontier
// (the most token machines failing at each prompt count), which costs
// far more simulations than the proof: d is left with them in its memo.
func proofPoints(d *designSearch, opt ScenarioOptimum, rate float64, corners bool) ([][2]int, error) {
	reg := d.region()
	kstar := key{obj: math.Inf(1)}
	var pts [][2]int
	if opt.Found {
		kstar = d.key(opt.Prompt, opt.Token)
		pts = append(pts, [2]int{opt.Prompt, opt.Token})
	}
	if d.design.IsBaseline() {
		n := reg.pmax
		if opt.Found {
			n = opt.Prompt - 1
		}
		if n >= 1 {
			pts = append(pts, [2]int{n, 0})
		}
		return pts, nil
	}
	// The points to cover: for each prompt count, the most token
	// machines that cost less than opt (0: none).
	need := make([]int, reg.pmax+2)
	last := 0
	for p := 1; p <= reg.pmax; p++ {
		t := reg.tb[p]
		for t > 0 && !less(d.key(p, t), kstar) {
			t--
		}
		if need[p] = t; t > 0 {
			last = p
		}
	}
	// fail[p]: the most token machines failing at p (0: none), down the
	// staircase from the previous prompt count's; feasibility is
	// monotone, so fail only falls.
	fail := make([]int, reg.pmax+1)
	prev := reg.tb[1]
	for p := 1; p <= reg.pmax; p++ {
		hi := min(prev, reg.tb[p])
		if hi < 1 {
			break
		}
		ok, err := d.feasible(p, hi, rate)
		if err != nil {
			return nil, err
		}
		if !ok {
			fail[p] = hi
		} else {
			lo := 0 // the largest failing count in [0, hi)
			for hi-lo > 1 {
				mid := (lo + hi) / 2
				if ok, err = d.feasible(p, mid, rate); err != nil {
					return nil, err
				}
				if ok {
					hi = mid
				} else {
					lo = mid
				}
			}
			fail[p] = lo
		}
		prev = fail[p]
		if prev == 0 && p >= last {
			break
		}
	}
	// Cover the needed points. With corners, from the fewest prompt
	// machines up: the leftmost uncovered one (p0, t0) is covered by a
	// failing point with at least p0 prompt and t0 token machines; the
	// one with the most prompt machines covers the most, as fail falls
	// with p. Without, as the frontier walk does: the prompt counts with
	// which every token machine fails by the last of them, each other by
	// a failing point of its own prompt count (none where the analytic
	// bound refuses the needed point).
	if !corners {
		pf := 0 // the last prompt count failing with every token machine
		for p := 1; p <= last && fail[p] >= reg.tb[p]; p++ {
			pf = p
		}
		if pf > 0 {
			pts = append(pts, [2]int{pf, reg.tb[pf]})
		}
		for p := pf + 1; p <= last; p++ {
			if need[p] == 0 {
				continue
			}
			if fail[p] < need[p] {
				return nil, fmt.Errorf("%s: %d/%d costs less than the optimum %d/%d and passes", d.spec.Label(), p, need[p], opt.Prompt, opt.Token)
			}
			cl, err := d.cluster(p, need[p])
			if err != nil {
				return nil, err
			}
			if d.s.upperBoundRPS(cl) >= rate {
				pts = append(pts, [2]int{p, need[p]})
			}
		}
		return pts, nil
	}
	for p0 := 1; p0 <= last; p0++ {
		t0 := need[p0]
		if t0 == 0 {
			continue
		}
		q := 0
		for p := p0; p <= reg.pmax && fail[p] >= t0; p++ {
			q = p
		}
		if q == 0 {
			return nil, fmt.Errorf("%s: %d/%d costs less than the optimum %d/%d and passes", d.spec.Label(), p0, t0, opt.Prompt, opt.Token)
		}
		pts = append(pts, [2]int{q, fail[q]})
		for p0 < last && need[p0+1] <= fail[q] && p0+1 <= q {
			p0++
		}
	}
	return pts, nil
}

// scenarioSearches are a robust search's scenario searches of the
// designs nds (one fresh search per scenario, memos empty).
func scenarioSearches(b testing.TB, p *Problem, nds []*designSearch, full *RobustResult, rob *Robust, sem chan struct{}) ([]*search, [][]*designSearch) {
	var ss []*search
	var ds [][]*designSearch
	for s := range full.Scenarios {
		row, err := scenarioSearch(context.Background(), p, scenario{index: s, seed: full.WorkloadSeeds[s], r: rob}, sem, nds)
		if err != nil {
			b.Fatal(err)
		}
		ss, ds = append(ss, row[0].s), append(ds, row)
	}
	return ss, ds
}

// BenchmarkRobustProofFloor is the floor of issue 32's ratio: the nominal
// search of BenchmarkRobustCost70, then only the simulations that prove
// the scenario optima the robust search found (proofPoints, found before
// the timer starts; run on every core at once), without the robust scan.
// Its x-nominal metric is its time over the nominal search's within the
// same operation, the ratio `optimize --confidence` prints.
//
// With plans, the floor also simulates each design's robust plan in as
// many scenarios as its claim needs (Needed; the scenarios in which the
// plan is the optimum already proved count without another simulation):
// what the printed "meets every SLO in at least k of N", true of the
// plan's own simulations, costs on top of the optima.
func BenchmarkRobustProofFloor(b *testing.B) {
	b.Run("walk", func(b *testing.B) { benchProofFloor(b, false, false, false) })
	b.Run("corners", func(b *testing.B) { benchProofFloor(b, true, false, false) })
	b.Run("walk+plans", func(b *testing.B) { benchProofFloor(b, false, true, false) })
	b.Run("walk+plans+checked", func(b *testing.B) { benchProofFloor(b, false, true, true) })
}

func benchProofFloor(b *testing.B, corners, plans, checked bool) {
	ctx := context.Background()
	mk := func() *Problem {
		p := problem(b, GoalCost, "coding", 70, 160, 120, allDesigns...)
		p.Parallel = runtime.NumCPU()
		p.StopFailing = true
		if checked {
			p.VerifyS = 900
		}
		return p
	}
	rob := Robust{Confidence: 0.9, Errors: errmodel.Builtin()}
	full, err := RunRobust(ctx, mk(), rob)
	if err != nil {
		b.Fatal(err)
	}
	rob.Scenarios = full.Scenarios
	p := mk()
	_, nds, err := runWith(ctx, p, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	_, ds := scenarioSearches(b, p, nds, full, &rob, make(chan struct{}, p.Parallel))
	proofs := make([][][][2]int, len(ds))
	var g errgroup.Group
	g.SetLimit(p.Parallel)
	for s, row := range ds {
		proofs[s] = make([][][2]int, len(row))
		for j, d := range row {
			g.Go(func() error {
				var err error
				proofs[s][j], err = proofPoints(d, full.Designs[j].Scenarios[s], p.RateRPS, corners)
				return err
			})
		}
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	claims := make([][]bool, len(ds))
	for s := range claims {
		claims[s] = make([]bool, len(nds))
	}
	if plans {
		if err := addPlanClaims(ds, full, p.RateRPS, proofs, claims); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	var ratio float64
	var sims, checks int64
	for i := 0; i < b.N; i++ {
		p := mk()
		start := time.Now()
		_, nds, err := runWith(ctx, p, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		nominal := time.Since(start)
		ss, ds := scenarioSearches(b, p, nds, full, &rob, make(chan struct{}, p.Parallel))
		var g errgroup.Group
		g.SetLimit(4 * p.Parallel)
		for s, row := range ds {
			for j, d := range row {
				for k, pt := range proofs[s][j] {
					g.Go(func() error {
						q, err := d.eval(pt[0], pt[1], p.RateRPS)
						if err == nil && q.Feasible != (k == 0 && full.Designs[j].Scenarios[s].Found || claims[s][j] && k == len(proofs[s][j])-1) {
							err = fmt.Errorf("scenario %d %s %d/%d: feasible %v", s, d.spec.Label(), pt[0], pt[1], q.Feasible)
						}
						return err
					})
				}
			}
		}
		if err := g.Wait(); err != nil {
			b.Fatal(err)
		}
		ratio = float64(time.Since(start)) / float64(nominal)
		sims, checks = 0, 0
		for _, se := range ss {
			sims += se.sims.Load()
			checks += se.verifications.Load()
		}
	}
	b.ReportMetric(ratio, "x-nominal")
	b.ReportMetric(float64(sims), "proof-simulations/op")
	if checked {
		b.ReportMetric(float64(checks), "proof-checks/op")
		b.ReportMetric(float64(full.ScenarioVerifications), "robust-checks")
	}
	b.ReportMetric(float64(full.Simulations), "robust-simulations")
}

// addPlanClaims appends to proofs[s][j] the robust plan of design j in
// the first scenarios s in which it passes and is not the optimum, until
// with the scenarios in which it is the optimum they make its Needed
// (the plan's simulations are found, as the proofs are, before any
// timing, by the scenario searches ds that found the proofs). The plan is
// then the last point of those scenarios' proofs, and claims[s][j] says
// so.
func addPlanClaims(ds [][]*designSearch, full *RobustResult, rate float64, proofs [][][][2]int, claims [][]bool) error {
	for j, rd := range full.Designs {
		if !rd.Found {
			continue
		}
		isOpt := func(s int) bool {
			o := rd.Scenarios[s]
			return o.Found && o.Prompt == rd.Prompt && o.Token == rd.Token
		}
		need := full.Needed
		for s := range full.Scenarios {
			if isOpt(s) {
				need--
			}
		}
		for s := 0; s < full.Scenarios && need > 0; s++ {
			if isOpt(s) {
				continue
			}
			q, err := ds[s][j].eval(rd.Prompt, rd.Token, rate)
			if err != nil {
				return err
			}
			if q.Feasible {
				proofs[s][j] = append(proofs[s][j], [2]int{rd.Prompt, rd.Token})
				claims[s][j] = true
				need--
			}
		}
		if need > 0 {
			return fmt.Errorf("%s: the plan %d/%d passes too few scenarios", rd.Design, rd.Prompt, rd.Token)
		}
	}
	return nil
}

// TestProofPoints: on a small space, the points proofPoints names prove
// each scenario optimum: the optimum passes, every other point fails,
// and together they cover every point that costs less than the optimum
// (each is dominated by a failing one, or refused by the analytic
// bound); with corners, no more points than without.
func TestProofPoints(t *testing.T) {
	t.Parallel()
	rb := Robust{Confidence: 0.9, Scenarios: 6, Errors: errmodel.Builtin(), Seed: 3}
	p := robustProblem(t)
	r, err := RunRobust(context.Background(), p, rb)
	if err != nil {
		t.Fatal(err)
	}
	_, nds, err := runWith(context.Background(), p, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, find := scenarioSearches(t, p, nds, r, &rb, make(chan struct{}, 1))
	_, check := scenarioSearches(t, p, nds, r, &rb, make(chan struct{}, 1))
	for s := range find {
		for j, d := range find[s] {
			opt := r.Designs[j].Scenarios[s]
			walk, err := proofPoints(d, opt, p.RateRPS, false)
			if err != nil {
				t.Fatal(err)
			}
			corners, err := proofPoints(d, opt, p.RateRPS, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(corners) > len(walk) {
				t.Errorf("scenario %d %s: %d points with corners, %d without", s, d.spec.Label(), len(corners), len(walk))
			}
			c := check[s][j]
			var failing [][2]int
			for k, pt := range walk {
				q, err := c.eval(pt[0], pt[1], p.RateRPS)
				if err != nil {
					t.Fatal(err)
				}
				if first := k == 0 && opt.Found; q.Feasible != first {
					t.Errorf("scenario %d %s: %d/%d feasible %v", s, d.spec.Label(), pt[0], pt[1], q.Feasible)
				}
				if !q.Feasible {
					failing = append(failing, pt)
				}
			}
			if !opt.Found {
				continue
			}
			kstar := c.key(opt.Prompt, opt.Token)
			for _, pt := range c.regionPoints(c.region()) {
				if !less(c.key(pt[0], pt[1]), kstar) {
					continue
				}
				covered := false
				for _, f := range failing {
					covered = covered || f[0] >= pt[0] && f[1] >= pt[1]
				}
				if cl, err := c.cluster(pt[0], pt[1]); err == nil && c.s.upperBoundRPS(cl) < p.RateRPS {
					covered = true
				}
				if !covered {
					t.Errorf("scenario %d %s: %d/%d costs less than the optimum %d/%d and no proof point covers it", s, d.spec.Label(), pt[0], pt[1], opt.Prompt, opt.Token)
				}
			}
		}
	}
}
