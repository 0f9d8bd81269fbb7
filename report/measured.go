package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"splitplan/evaluator/perf/measured"
)

// MeasuredPredictionsColumns is the header of perf validate --measured
// --out: one row per benchmark run of the measured file, predicted or
// with the reason it could not be, and the launch flags of its recipe
// that the prediction applied (measured.LaunchFlags; empty where none is
// known).
var MeasuredPredictionsColumns = []string{"id", "predicted_ttft_ms", "predicted_tpot_ms", "provenance", "reason", "launch_flags"}

// WriteMeasuredPredictionsCSV writes one row per prediction, in input order.
func WriteMeasuredPredictionsCSV(w io.Writer, preds []measured.RowPrediction) error {
	cw := csv.NewWriter(w)
	cw.Write(MeasuredPredictionsColumns)
	num := func(v float64, ok bool) string {
		if !ok {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	for _, p := range preds {
		ok := p.Reason == ""
		flags := ""
		if ok {
			flags = measured.LaunchFlags(p.Row)
		}
		cw.Write([]string{p.Row.ID, num(p.TTFTms, ok), num(p.TPOTms, ok), p.Provenance, p.Reason, flags})
	}
	cw.Flush()
	return cw.Error()
}

// MeasuredPrediction is one row of a predictions CSV as read back.
type MeasuredPrediction struct {
	ID             string
	TTFTms, TPOTms float64 // NaN when the row was not predicted
	Provenance     string
	Reason         string
	LaunchFlags    string
}

// ReadMeasuredPredictionsCSV reads a file written by
// WriteMeasuredPredictionsCSV; name is used in messages.
func ReadMeasuredPredictionsCSV(r io.Reader, name string) ([]MeasuredPrediction, error) {
	t, err := readCSVFrom(r, name, MeasuredPredictionsColumns, "a predictions CSV (perf validate --measured --out)")
	if err != nil {
		return nil, err
	}
	out := make([]MeasuredPrediction, 0, len(t.rows))
	for i := range t.rows {
		c := t.row(i)
		p := MeasuredPrediction{ID: c.str("id"), TTFTms: c.num("predicted_ttft_ms", true), TPOTms: c.num("predicted_tpot_ms", true),
			Provenance: c.str("provenance"), Reason: c.str("reason"), LaunchFlags: c.str("launch_flags")}
		if p.ID == "" {
			c.fail("id", "a benchmark id")
		}
		if p.Reason == "" && (math.IsNaN(p.TTFTms) || math.IsNaN(p.TPOTms)) {
			c.fail("predicted_ttft_ms", "a prediction, or a reason in the reason column")
		}
		if c.err != nil {
			return nil, c.err
		}
		out = append(out, p)
	}
	return out, nil
}

// PrintCellMAPE prints MAPE per (GPU, model, engine, mode) cell, with the
// median predicted / measured that says which way the cell is off (above
// ×1 too slow), and the overall line, under a title that says what the
// figures are (held-out or in-sample), and the median over cells.
func PrintCellMAPE(w io.Writer, title string, cells []measured.CellMAPE, unpredicted int) error {
	fmt.Fprintln(w, title)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "gpu\tmodel\tengine\tmode\trows\tTTFT MAPE %\tTPOT MAPE %\tE2E MAPE %\tTTFT pred/meas\tTPOT pred/meas\t")
	var all *measured.CellMAPE
	for i, c := range cells {
		if c.All {
			all = &cells[i]
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%.1f\t%.1f\t%.1f\t×%.2f\t×%.2f\t\n", c.Cell.GPU, c.Cell.Model, c.Cell.Engine, c.Cell.Mode, c.Rows, c.TTFT, c.TPOT, c.E2E, c.RatioTTFT, c.RatioTPOT)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	ttft, tpot := measured.MedianCellMAPE(cells)
	fmt.Fprintf(w, "\nmedian over %d cells: TTFT %.1f%%, TPOT %.1f%%, E2E %.1f%%\n", len(cells)-btoi(all != nil), ttft, tpot, measured.MedianCellE2E(cells))
	// Per engine: the figures a spec-only provenance quotes when these
	// are leave-one-GPU-out ones.
	if byEngine := measured.MedianCellMAPEByEngine(cells); len(byEngine) > 1 {
		parts := make([]string, len(byEngine))
		for i, m := range byEngine {
			parts[i] = fmt.Sprintf("%s TTFT %.1f%%, TPOT %.1f%% (%d cells)", m.Engine, m.TTFT, m.TPOT, m.Cells)
		}
		fmt.Fprintf(w, "median per engine: %s\n", strings.Join(parts, "; "))
	}
	if all != nil {
		fmt.Fprintf(w, "all %d predicted rows: TTFT %.1f%%, TPOT %.1f%%, E2E %.1f%% (median predicted / measured ×%.2f, ×%.2f)\n", all.Rows, all.TTFT, all.TPOT, all.E2E, all.RatioTTFT, all.RatioTPOT)
	}
	fmt.Fprintln(w, "E2E: a request's end-to-end latency, TTFT + (its mean output length − 1) × TPOT, measured and predicted alike")
	if unpredicted > 0 {
		fmt.Fprintf(w, "%d rows could not be predicted (see the reason column of --out)\n", unpredicted)
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
