package cli

import (
	"bytes"
	"strings"
	"testing"

	"splitplan/evaluator/perf/measured"
)

// TestPrintPooledShares: the held-out summary names the cells that make
// the most of the pooled error, each by its points of it (rows × MAPE /
// all rows), largest first and separately for TTFT and TPOT.
func TestPrintPooledShares(t *testing.T) {
	cell := func(gpu string, rows int, ttft, tpot float64) measured.CellMAPE {
		return measured.CellMAPE{Cell: measured.Cell{GPU: gpu, Model: "m", Engine: measured.VLLM, Mode: measured.Agg}, Rows: rows, TTFT: ttft, TPOT: tpot}
	}
	cells := []measured.CellMAPE{
		cell("a", 10, 100, 10), // 10 and 1 points of 100 rows
		cell("b", 80, 20, 20),  // 16 and 16
		cell("c", 5, 40, 200),  // 2 and 10
		cell("d", 5, 10, 10),   // 0.5 and 0.5
		{All: true, Rows: 100, TTFT: 28.5, TPOT: 27.5},
	}
	var b bytes.Buffer
	printPooledShares(&b, cells)
	got := b.String()
	for _, w := range []string{
		"the 100 rows):\n",
		"  TTFT: b/m/vllm/agg 16.0 (80 rows); a/m/vllm/agg 10.0 (10 rows); c/m/vllm/agg 2.0 (5 rows)\n",
		"  TPOT: b/m/vllm/agg 16.0 (80 rows); c/m/vllm/agg 10.0 (5 rows); a/m/vllm/agg 1.0 (10 rows)\n",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in:\n%s", w, got)
		}
	}
	b.Reset()
	printPooledShares(&b, nil)
	if b.Len() != 0 {
		t.Errorf("no cells: printed %q", b.String())
	}
}
