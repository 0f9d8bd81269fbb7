package plots

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func winnersFixture() WinnersFigure {
	f := WinnersFigure{Title: "Winning design per cell", XLabel: "rate (req/s)", YLabel: "model · GPUs",
		Cols: []string{"5", "10", "20"}}
	for _, m := range []string{"llama3.1-8b", "qwen3-32b"} {
		for _, g := range []string{"H100", "A100,H100"} {
			f.Rows = append(f.Rows, m+" · "+g)
		}
	}
	designs := []string{"Baseline-H100", "Splitwise-HH", "Splitwise-HA", "Baseline-A100"}
	for r := range f.Rows {
		for c := range f.Cols {
			switch {
			case r == 3 && c == 2:
				continue // not run
			case r == 2 && c == 2:
				f.Cells = append(f.Cells, WinnerCell{Row: r, Col: c}) // none met the goal
			default:
				f.Cells = append(f.Cells, WinnerCell{Row: r, Col: c, Design: designs[(r+c)%len(designs)], Text: fmt.Sprintf("$%d/h", 38*(c+1)*(r+1))})
			}
		}
	}
	return f
}

// largeWinners is a study of 4 models × 4 GPU sets (16 rows) at 8 rates,
// 10 designs winning somewhere.
func largeWinners() WinnersFigure {
	f := WinnersFigure{Title: "Winning design per cell", XLabel: "rate (req/s)", YLabel: "model · GPUs"}
	for c := 0; c < 8; c++ {
		f.Cols = append(f.Cols, fmt.Sprint(10*(c+1)))
	}
	for _, m := range []string{"llama3.1-8b", "llama3.1-70b", "qwen3-32b", "mixtral-8x7b"} {
		for _, g := range []string{"H100", "A100,H100", "H100,H200", "A100,H100,H200"} {
			f.Rows = append(f.Rows, m+" · "+g)
		}
	}
	names := gpuDesigns()
	for r := range f.Rows {
		for c := range f.Cols {
			f.Cells = append(f.Cells, WinnerCell{Row: r, Col: c, Design: names[(3*r+c)%10], Text: fmt.Sprintf("$%d/h", 38*(c+1)*(r+1))})
		}
	}
	return f
}

func TestWinners(t *testing.T) {
	t.Parallel()
	golden(t, "winners", func(p string) error { return Winners(p, winnersFixture()) })
	for name, f := range map[string]WinnersFigure{"winners": winnersFixture(), "winners-16x8": largeWinners()} {
		fig, err := winnersFigure(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range layoutProblems(fig, 0.08) {
			t.Errorf("%s: %s", name, p)
		}
		if keep != "" {
			fig.save(filepath.Join(keep, "layout-"+name+".png"))
		}
	}
	svg := filepath.Join(t.TempDir(), "w.svg")
	if err := Winners(svg, WinnersFigure{Rows: []string{"a"}, Cols: []string{"1"}}); !errors.Is(err, ErrNoData) {
		t.Errorf("no cells: %v", err)
	}
	bad := winnersFixture()
	bad.Cells = append(bad.Cells, WinnerCell{Row: 0, Col: 0, Design: "HH"})
	if err := Winners(svg, bad); err == nil || !strings.Contains(err.Error(), "two cells") {
		t.Errorf("a repeated cell: %v", err)
	}
	bad.Cells[len(bad.Cells)-1].Row = 9
	if err := Winners(svg, bad); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("a cell outside the grid: %v", err)
	}
}
