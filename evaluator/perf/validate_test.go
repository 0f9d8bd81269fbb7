package perf

import (
	"math"
	"reflect"
	"testing"
)

func TestValidateReal(t *testing.T) {
	t.Parallel()
	rows := realRows(t)
	v, err := Validate(rows, 1, DefaultMixedPenalty)
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 13 {
		t.Fatalf("%d rows, want 12 pairs + all", len(v))
	}
	all := v[len(v)-1]
	// Seed 1 holds out two of the six runs that did not run as one batch
	// (Llama2-70B, tp 2, 64 requests, on H100 and power-capped H100).
	if all.Model != AllPairs || all.TestRows != 12*21-2 || all.ExcludedRows != 2 || all.TrainRows != 12*84 {
		t.Errorf("pooled row %+v", all)
	}
	// The source reports under 3%; splitplan's default fit does about as
	// well pooled (3.1% prompt; per pair the prompt error reaches about 6%
	// where a held-out point is the only one at its token count). The
	// token error (1.4%) is mostly the batch-1 context rows, which scatter
	// by ±1 ms about the straight KV-cache line.
	if all.PromptMAPEPct > 3.5 || all.TokenMAPEPct > 2 {
		t.Errorf("pooled MAPE prompt %.2f%% token %.2f%%", all.PromptMAPEPct, all.TokenMAPEPct)
	}
	for _, r := range v[:12] {
		if r.TestRows+r.ExcludedRows != 21 || r.PromptMAPEPct <= 0 || r.PromptMAPEPct > 10 || r.TokenMAPEPct > 5 {
			t.Errorf("pair row %+v", r)
		}
	}
	again, err := Validate(rows, 1, DefaultMixedPenalty)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v, again) {
		t.Error("Validate is not deterministic")
	}
	other, err := Validate(rows, 2, DefaultMixedPenalty)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(v, other) {
		t.Error("another seed gave the same split")
	}
	// A pair's split does not depend on the other pairs in the input.
	var sub []ProfileRow
	for _, r := range rows {
		if r.Model == "llama2-70b" && r.Hardware == "a100-80gb" && r.TP == 2 {
			sub = append(sub, r)
		}
	}
	one, err := Validate(sub, 1, DefaultMixedPenalty)
	if err != nil {
		t.Fatal(err)
	}
	if one[0] != v[3] {
		t.Errorf("llama2-70b/a100-80gb/tp2 alone: %+v, among others: %+v", one[0], v[3])
	}
}

func TestValidateSmall(t *testing.T) {
	t.Parallel()
	rows := []ProfileRow{
		{Model: "m", Hardware: "h", TP: 1, PromptSize: 1, BatchSize: 1, TokenSize: 2, PromptTime: 1, TokenTime: 1},
		{Model: "n", Hardware: "h", TP: 1, PromptSize: 1, BatchSize: 1, TokenSize: 2, PromptTime: 1, TokenTime: 1},
		{Model: "n", Hardware: "h", TP: 1, PromptSize: 1, BatchSize: 1, TokenSize: 2, PromptTime: 1.5, TokenTime: 1},
	}
	v, err := Validate(rows, 7, DefaultMixedPenalty)
	if err != nil {
		t.Fatal(err)
	}
	if v[0].TestRows != 0 || v[1].TestRows != 1 || v[2].TestRows != 1 {
		t.Errorf("test rows %d %d %d, want 0 1 1", v[0].TestRows, v[1].TestRows, v[2].TestRows)
	}
	// A pair with no row held out has no error measured: NaN, not 0%.
	if r := v[0]; !math.IsNaN(r.PromptMAPEPct) || !math.IsNaN(r.TokenMAPEPct) || !math.IsNaN(r.CompatPromptMAPEPct) || !math.IsNaN(r.CompatTokenMAPEPct) {
		t.Errorf("no test row: %+v, want NaN errors", r)
	}
	if r := v[1]; math.IsNaN(r.PromptMAPEPct) {
		t.Errorf("one test row: %+v", r)
	}
	if _, err := Validate(nil, 1, 1.1); err == nil {
		t.Error("no error for no rows")
	}
}
