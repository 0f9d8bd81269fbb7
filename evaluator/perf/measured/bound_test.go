package measured

import (
	"os"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// TestModelClassBound measures how well the model class can fit the
// measured rows at all: every cell (GPU, model, engine, mode) fitted on its
// own rows, without a ridge, starting from the embedded calibration's
// entry for it, then predicted in-sample. It is an optimistic bound for any
// held-out figure of the same iteration model and benchmark simulation
// (docs/model.md quotes it), and it checks the fit: no cell's loss may end
// above where it started. About 30 s on two cores, so it runs only with
// SPLITPLAN_BOUND=1 (-v prints the per-cell figures and fitted terms).
func TestModelClassBound(t *testing.T) {
	if os.Getenv("SPLITPLAN_BOUND") == "" {
		t.Skip("set SPLITPLAN_BOUND=1 to measure the per-cell bound")
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
	preds, _ := prepare(rows)
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
		ef, sv := params(x)
		var s float64
		for _, p := range ps {
			s += logErr(p, ef, sv)
		}
		return s / float64(len(ps))
	}
	var tt, tp []float64
	var cms []CellMAPE
	for _, c := range cells {
		ps := byCell[c]
		e, _ := cal.LookupEntry(c.GPU, c.Engine)
		x0 := unparams(e.Efficiency, e.Serving)
		x, err := fitGroup(ps, len(ps), x0, nil, 0, 1500)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if l0, l := loss(ps, x0), loss(ps, x); l > l0+1e-9 {
			t.Errorf("%s: the cell's own fit ended at loss %.4f, above its start %.4f", c, l, l0)
		}
		ef, sv := params(x)
		var at, ap []float64
		for _, p := range ps {
			a, b := p.predict(ef, sv)
			at = append(at, ape(a*1e3, p.row.TTFTms))
			ap = append(ap, ape(b*1e3, p.row.TPOTms))
		}
		mt, mp := stat.Mean(at, nil), stat.Mean(ap, nil)
		tt, tp = append(tt, mt), append(tp, mp)
		cms = append(cms, CellMAPE{Cell: c, Rows: len(ps), TTFT: mt, TPOT: mp})
		t.Logf("%-52s rows %4d  TTFT %5.1f%%  TPOT %5.1f%% | compute %.2f expert %.2f memory %.2f comm %.2f | request %.0f ms, wait %.1f iterations, %.2f ms a client",
			c, len(ps), mt, mp, ef.Compute, ef.ExpertCompute, ef.Memory, ef.Comm, sv.RequestOverheadS*1e3, sv.WaitIterations, sv.ClientOverheadS*1e3)
	}
	mt, mp := MedianCellMAPE(cms)
	within := func(v []float64, lim float64) int {
		n := 0
		for _, x := range v {
			if x <= lim {
				n++
			}
		}
		return n
	}
	t.Logf("each cell fitted on its own rows (in-sample), %d cells: median per-cell MAPE TTFT %.1f%%, TPOT %.1f%%; cells within 20%% TTFT %d, within 10%% TPOT %d",
		len(cells), mt, mp, within(tt, 20), within(tp, 10))
}
