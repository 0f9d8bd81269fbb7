package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"splitplan/evaluator/perf/measured"
)

// TestMeasuredPredictionsRoundTrip: what perf validate --measured --out
// writes reads back row for row, unpredicted rows keeping their reason.
func TestMeasuredPredictionsRoundTrip(t *testing.T) {
	t.Parallel()
	preds := []measured.RowPrediction{
		{Row: measured.Row{ID: "a_c4"}, TTFTms: 123.456789, TPOTms: 7.25, Provenance: "calibrated"},
		{Row: measured.Row{ID: "b,with comma"}, Reason: "no architecture for zhipuai/GLM-5"},
		{Row: measured.Row{ID: "c"}, TTFTms: 1e-3, TPOTms: 2.5e3, Provenance: "spec-only (efficiencies of h100_sxm/vllm)"},
		// A run with its launch script's flags (InferenceX's vLLM gpt-oss script).
		{Row: measured.Row{ID: "d", Engine: measured.VLLM, Mode: measured.Agg, Model: "openai/gpt-oss-120b", GPU: "h200_sxm"},
			TTFTms: 80, TPOTms: 9, Provenance: "calibrated"},
		// Not predicted: no flags, though its recipe is known.
		{Row: measured.Row{ID: "e", Engine: measured.VLLM, Mode: measured.Agg, Model: "openai/gpt-oss-120b", GPU: "h200_sxm"},
			Reason: "too wide"},
	}
	var buf bytes.Buffer
	if err := WriteMeasuredPredictionsCSV(&buf, preds); err != nil {
		t.Fatal(err)
	}
	got, err := ReadMeasuredPredictionsCSV(strings.NewReader(buf.String()), "p.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(preds) {
		t.Fatalf("read %d rows, wrote %d", len(got), len(preds))
	}
	for i, p := range preds {
		g := got[i]
		ok := p.Reason == ""
		same := func(a, b float64) bool { return (!ok && math.IsNaN(a)) || a == b }
		if g.ID != p.Row.ID || g.Provenance != p.Provenance || g.Reason != p.Reason || !same(g.TTFTms, p.TTFTms) || !same(g.TPOTms, p.TPOTms) {
			t.Errorf("row %d read back as %+v, wrote %+v", i, g, p)
		}
		if want := map[string]string{"d": "KV cache dtype auto (bf16); --max-num-batched-tokens 8192"}[g.ID]; g.LaunchFlags != want {
			t.Errorf("row %s: launch flags %q, want %q", g.ID, g.LaunchFlags, want)
		}
	}
	for body, want := range map[string]string{
		"id,x\n": "p.csv",
		strings.Join(MeasuredPredictionsColumns, ",") + "\n,1,2,c,,\n":   "a benchmark id",
		strings.Join(MeasuredPredictionsColumns, ",") + "\nx,,,c,,\n":    "a prediction, or a reason",
		strings.Join(MeasuredPredictionsColumns, ",") + "\nx,-1,2,c,,\n": "a number of zero or more",
	} {
		if _, err := ReadMeasuredPredictionsCSV(strings.NewReader(body), "p.csv"); err == nil || !strings.Contains(err.Error(), want) || !IsInput(err) {
			t.Errorf("%q: error %v, want an input error saying %q", body, err, want)
		}
	}
}
