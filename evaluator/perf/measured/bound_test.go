package measured

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// TestModelClassBound measures how well the engine terms can fit the
// measured rows at all, with the physics at Physics: every cell (GPU,
// model, engine, mode) fits its own engine and serving terms on its own
// rows, starting from the embedded calibration's entry for it, then is
// predicted in-sample. It is an optimistic bound for any held-out figure
// of the same iteration model and benchmark simulation, and it checks the
// fit: no cell's loss may end above where it started. It runs only with
// SPLITPLAN_BOUND=1 (-v prints the per-cell figures and fitted terms).
func TestModelClassBound(t *testing.T) {
	t.Parallel()
	preds := boundPreds(t, "the per-cell bound")
	ctx := context.Background()
	cal := Default()
	byCell := map[Cell][]*rowPredictor{}
	var cells []Cell
	for _, p := range preds {
		c := p.row.CellOf()
		if _, ok := byCell[c]; !ok {
			cells = append(cells, c)
		}
		byCell[c] = append(byCell[c], p)
	}
	slices.SortFunc(cells, func(a, b Cell) int { return strings.Compare(a.String(), b.String()) })
	loss := func(ps []*rowPredictor, x []float64) float64 {
		th, sv := engineParams(x)
		var s float64
		for _, p := range ps {
			a, b := p.predictTerms(th, sv, 1)
			s += fitErr(p.row, a, b)
		}
		return s / float64(len(ps))
	}
	var tt, tp []float64
	var cms []CellMAPE
	for _, c := range cells {
		ps := byCell[c]
		e, _ := cal.LookupEntry(c.GPU, c.Engine)
		x0 := engineCoords(engineTermsOf(e.Efficiency), e.Serving)
		x, err := minimize(ctx, func(x []float64) float64 { return loss(ps, x) }, x0, 1500)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if l0, l := loss(ps, x0), loss(ps, x); l > l0+1e-9 {
			t.Errorf("%s: the cell's own fit ended at loss %.4f, above its start %.4f", c, l, l0)
		}
		th, sv := engineParams(x)
		var at, ap []float64
		for _, p := range ps {
			a, b := p.predictTerms(th, sv, 1)
			at = append(at, ape(a*1e3, p.row.TTFTms))
			ap = append(ap, ape(b*1e3, p.row.TPOTms))
		}
		mt, mp := stat.Mean(at, nil), stat.Mean(ap, nil)
		tt, tp = append(tt, mt), append(tp, mp)
		cms = append(cms, CellMAPE{Cell: c, Rows: len(ps), TTFT: mt, TPOT: mp})
		t.Logf("%-52s rows %4d  TTFT %5.1f%%  TPOT %5.1f%% | %.3f ms/iteration, %.1f µs/layer, %.3f ms/prompt iteration, %.1f µs/sequence | request %.0f ms, wait %.1f iterations, %.2f ms a client",
			c, len(ps), mt, mp, th[0]*1e3, th[1]*1e6, th[2]*1e3, th[3]*1e6, sv.RequestOverheadS*1e3, sv.WaitIterations, sv.ClientOverheadS*1e3)
	}
	mt, mp := MedianCellMAPE(cms)
	t.Logf("each cell fitted on its own rows (in-sample), %d cells: median per-cell MAPE TTFT %.1f%%, TPOT %.1f%%; cells within 20%% TTFT %d, within 10%% TPOT %d",
		len(cells), mt, mp, cellsWithin(tt, 20), cellsWithin(tp, 10))
}

// cellsWithin counts the per-cell MAPEs of v at most lim.
func cellsWithin(v []float64, lim float64) int {
	n := 0
	for _, x := range v {
		if x <= lim {
			n++
		}
	}
	return n
}

// boundPreds are the predictors of every predictable row of the shared
// benchmarks, for a bound test (what names it): skipped unless
// SPLITPLAN_BOUND is set and ../shared is present.
func boundPreds(t *testing.T, what string) []*rowPredictor {
	t.Helper()
	if os.Getenv("SPLITPLAN_BOUND") == "" {
		t.Skip("set SPLITPLAN_BOUND=1 to measure " + what)
	}
	f, err := os.Open(sharedCSV)
	if err != nil {
		t.Skip("../shared not present")
	}
	defer f.Close()
	rows, err := Read(f, sharedCSV)
	if err != nil {
		t.Fatal(err)
	}
	preds, _, err := prepare(context.Background(), rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return preds
}
