package report

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestPairsCSVRoundTrip(t *testing.T) {
	t.Parallel()
	recs := []PairRec{
		{PromptGPU: "H100", TokenGPU: "H200", Status: "found", Designs: 12, Design: "Splitwise H100·tp2 / H200·tp4", PromptTP: 2, TokenTP: 4,
			Prompt: 37, Token: 1, CostUSDPerH: 373.5, PowerKW: 110.90625, CapacityRPS: 70, Bound: math.NaN(), Best: true,
			PromptProvenance: "calibrated", TokenProvenance: "spec-only"},
		{PromptGPU: "H200", TokenGPU: Colocated, Status: "bounded", Designs: 4, Bound: 429},
		{PromptGPU: "B200", TokenGPU: Colocated, Status: "none", Designs: 4, Bound: math.NaN()},
	}
	var buf bytes.Buffer
	if err := WritePairsCSV(&buf, recs); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "pairs.csv")
	os.WriteFile(path, buf.Bytes(), 0o644)
	got, err := ReadPairsCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		a, b := recs[i], got[i]
		if math.IsNaN(a.Bound) && math.IsNaN(b.Bound) {
			a.Bound, b.Bound = 0, 0
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("row %d: read %+v, wrote %+v", i, b, a)
		}
	}
	bad := strings.Replace(buf.String(), "bounded", "maybe", 1)
	os.WriteFile(path, []byte(bad), 0o644)
	if _, err := ReadPairsCSV(path); err == nil || !strings.Contains(err.Error(), "pairs.csv:3") {
		t.Errorf("bad status: error %v, want it to name the file and line", err)
	}
}
