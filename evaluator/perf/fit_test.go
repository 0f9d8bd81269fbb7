package perf

import (
	"math"
	"strings"
	"testing"
)

// TestCompatMatchesReference checks the compat fit against the figures of
// the reference simulator (SPEC §3 and the worked example of §5).
func TestCompatMatchesReference(t *testing.T) {
	t.Parallel()
	a100 := realPair(t, "bloom-176b", "a100-80gb", 8).CompatModel()
	h100 := realPair(t, "bloom-176b", "h100-80gb", 8).CompatModel()
	tests := []struct {
		name  string
		got   func() (float64, bool)
		want  float64
		extra bool
	}{
		{"A100 decode of 1", func() (float64, bool) { return a100.DecodeTime(1, 1128) }, 0.047518, true},
		{"H100 decode of 1", func() (float64, bool) { return h100.DecodeTime(1, 0) }, 0.035327, true},
		{"H100 decode of 2", func() (float64, bool) { return h100.DecodeTime(2, 3000) }, 0.0353305, true},
		{"H100 prompt of 1000", func() (float64, bool) { return h100.PromptTime(1000) }, 0.129588, false},
		{"H100 mixed 500+1", func() (float64, bool) { return h100.MixedTime(500, 1, 1000) }, 0.082576, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ex := tt.got()
			if math.Abs(got-tt.want) >= 1e-6 || ex != tt.extra {
				t.Errorf("got %.9f s (extrapolated %v), want %.7f s (extrapolated %v)", got, ex, tt.want, tt.extra)
			}
		})
	}
	if got, _ := h100.PromptTime(501); math.Abs(1.1*got-0.082576) >= 1e-6 {
		t.Errorf("1.1 × PromptTime(501) = %.9f, want 0.082576", 1.1*got)
	}
}

func TestFitRealDefault(t *testing.T) {
	t.Parallel()
	pairs, err := Fit(realRows(t), DefaultMixedPenalty)
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != 12 {
		t.Fatalf("got %d pairs, want 12", len(pairs))
	}
	for i := range pairs {
		p := &pairs[i]
		if i > 0 && !keyLess(pairKey{pairs[i-1].ModelName, pairs[i-1].Hardware, pairs[i-1].TP}, pairKey{p.ModelName, p.Hardware, p.TP}) {
			t.Errorf("pairs not sorted at %d: %s after %s", i, p.Name(), pairs[i-1].Name())
		}
		if p.BaseContextTokens != 576 {
			t.Errorf("%s: base context %v, want 512 + 128/2", p.Name(), p.BaseContextTokens)
		}
		// Llama2-70B at tp 2 with 64 requests did not run as one batch
		// (not Consistent): the default curves leave it out, compat keeps it.
		wantDecode, wantPrompt := 7, 9
		if p.ModelName == "llama2-70b" && p.TP == 2 {
			wantDecode, wantPrompt = 6, 8
		}
		if got := p.DecodeBatch; len(got) != wantDecode || got[0] != 1 || got[len(got)-1] != float64(int(1)<<(wantDecode-1)) {
			t.Errorf("%s: decode knots %v, want 1..%d", p.Name(), got, 1<<(wantDecode-1))
		}
		if len(p.PromptTokens) != wantPrompt || len(p.CompatBatchTokens) != 9 || len(p.ContextTokens) != 13 {
			t.Errorf("%s: knots prompt %d compat %d context %d", p.Name(), len(p.PromptTokens), len(p.CompatBatchTokens), len(p.ContextTokens))
		}
		m := p.Model()
		// At the base context the model answers the profiled medians, up
		// to what the isotonic fit pools (a few tenths of a millisecond);
		// where nothing is pooled (BLOOM-176B on A100) exactly.
		for i, b := range p.DecodeBatch {
			got, ex := m.DecodeTime(int(b), int64(b)*576)
			want := p.DecodeTimeS[i]
			tol := 0.03 * want
			if p.Hardware == "a100-80gb" && p.ModelName == "bloom-176b" {
				tol = 1e-12
			}
			if math.Abs(got-want) > tol || ex {
				t.Errorf("%s: DecodeTime(%v, base) = %v, %v; want %v", p.Name(), b, got, ex, want)
			}
		}
	}
}

// TestFitSynthetic fits a small hand-made profile whose answers are known.
func TestFitSynthetic(t *testing.T) {
	t.Parallel()
	in := header +
		// base point (512, 1, 128), three repeats: median 50 ms.
		"m,hw,512,1,128,,,100,49,,8\n" +
		"m,hw,512,1,128,,,100,50,,8\n" +
		"m,hw,512,1,128,,,100,60,,8\n" +
		// batch 4 at the base context: prompt 2048 tokens.
		"m,hw,512,4,128,,,400,70,,8\n" +
		"m,hw,512,4,128,,,400,72,,8\n" +
		// longer context at batch 1: mean context 512 + 1024/2 = 1024.
		"m,hw,512,1,1024,,,100,60,,8\n" +
		// a longer prompt at batch 1, same x as 512×4: its prompt time joins.
		"m,hw,2048,1,128,,,410,55,,8\n"
	rows, err := ReadProfile(strings.NewReader(in), "syn.csv")
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := Fit(rows, 1.25)
	if err != nil {
		t.Fatal(err)
	}
	p := pairs[0]
	eq := func(name string, got, want []float64) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s = %v, want %v", name, got, want)
			return
		}
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-12 {
				t.Errorf("%s = %v, want %v", name, got, want)
				return
			}
		}
	}
	eq("prompt_tokens", p.PromptTokens, []float64{512, 2048})
	// 512: points (512,1,128) and (512,1,1024) both 100 ms; 2048: median of 400 and 410.
	eq("prompt_time_s", p.PromptTimeS, []float64{0.1, 0.405})
	eq("decode_batch", p.DecodeBatch, []float64{1, 4})
	eq("decode_time_s", p.DecodeTimeS, []float64{0.050, 0.071})
	eq("context_tokens", p.ContextTokens, []float64{576, 1024, 2112})
	eq("context_time_s", p.ContextTimeS, []float64{0.050, 0.060, 0.055})
	if p.BaseContextTokens != 576 || p.MixedPenalty != 1.25 {
		t.Errorf("base %v penalty %v", p.BaseContextTokens, p.MixedPenalty)
	}
	// Compat: pooled medians per batch tokens: 512 ← five rows
	// (token 49,50,60,60 and prompt 100 ×4 → median of 4 = mean of middle two).
	eq("compat_batch_tokens", p.CompatBatchTokens, []float64{512, 2048})
	eq("compat_token_time_s", p.CompatTokenTimeS, []float64{0.055, 0.070})
	eq("compat_prompt_time_s", p.CompatPromptTimeS, []float64{0.1, 0.400})

	// The context slope by least squares over the context knots,
	// computed here by the closed form.
	cx, cy := p.ContextTokens, p.ContextTimeS
	mx, my := (cx[0]+cx[1]+cx[2])/3, (cy[0]+cy[1]+cy[2])/3
	var sxy, sxx float64
	for i := range cx {
		sxy += (cx[i] - mx) * (cy[i] - my)
		sxx += (cx[i] - mx) * (cx[i] - mx)
	}
	s := sxy / sxx
	if got := p.ContextSlope(); math.Abs(got-s) > 1e-15 {
		t.Errorf("ContextSlope = %v, want %v", got, s)
	}
	m := p.Model()
	tests := []struct {
		name  string
		got   func() (float64, bool)
		want  float64
		extra bool
	}{
		{"prompt at knot", func() (float64, bool) { return m.PromptTime(512) }, 0.1, false},
		{"prompt between", func() (float64, bool) { return m.PromptTime(1280) }, 0.2525, false},
		{"prompt zero", func() (float64, bool) { return m.PromptTime(0) }, 0, false},
		{"decode base context", func() (float64, bool) { return m.DecodeTime(4, 4*576) }, 0.071, false},
		{"decode unknown context", func() (float64, bool) { return m.DecodeTime(4, 0) }, 0.071, false},
		// context 1024 per request: s per extra context token of each of
		// the 4 requests.
		{"decode long context", func() (float64, bool) { return m.DecodeTime(4, 4*1024) }, 0.071 + 4*(1024-576)*s, false},
		// context 100 per request, below the profiled contexts.
		{"decode short context", func() (float64, bool) { return m.DecodeTime(4, 4*100) }, 0.071 - 4*(576-100)*s, true},
		{"decode zero batch", func() (float64, bool) { return m.DecodeTime(0, 0) }, 0, false},
		{"decode extrapolated batch", func() (float64, bool) { return m.DecodeTime(7, 7*576) }, 0.071 + 3*0.007, true},
		// 1.25 × prompt(512) beats the decodes alone; plus their KV reads
		// (decode curve extrapolated to 12 requests).
		{"mixed", func() (float64, bool) { return m.MixedTime(500, 12, 0) }, 1.25*0.1 + 12*576*s, true},
		// One prompt token with 4 decodes: the decodes alone win.
		{"mixed, decodes win", func() (float64, bool) { return m.MixedTime(1, 4, 4*576) }, 0.071, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ex := tt.got()
			if math.Abs(got-tt.want) > 1e-12 || ex != tt.extra {
				t.Errorf("got %v, %v; want %v, %v", got, ex, tt.want, tt.extra)
			}
		})
	}
}

func TestFitErrors(t *testing.T) {
	t.Parallel()
	rows := []ProfileRow{{Model: "m", Hardware: "h", TP: 1, PromptSize: 1, BatchSize: 1, TokenSize: 1, PromptTime: 1, TokenTime: 1}}
	for _, pen := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := Fit(rows, pen); err == nil || !strings.Contains(err.Error(), "penalty") {
			t.Errorf("penalty %v: err = %v", pen, err)
		}
	}
	if _, err := Fit(nil, 1.1); err == nil {
		t.Error("no error for no rows")
	}
	pairs, err := Fit(rows, 1.1)
	if err != nil {
		t.Fatal(err)
	}
	m := pairs[0].Model()
	if y, ex := m.PromptTime(1); y != 1 || ex {
		t.Errorf("single-row pair: PromptTime(1) = %v, %v", y, ex)
	}
	if y, ex := m.DecodeTime(3, 30); y != 1 || !ex {
		t.Errorf("single-row pair: DecodeTime(3, 30) = %v, %v (constant curves)", y, ex)
	}
}

func TestFitNamesCaseInsensitive(t *testing.T) {
	t.Parallel()
	rows := []ProfileRow{
		{Model: "BLOOM", Hardware: "A100", TP: 8, PromptSize: 1, BatchSize: 1, TokenSize: 1, PromptTime: 1, TokenTime: 1},
		{Model: "bloom", Hardware: "a100", TP: 8, PromptSize: 2, BatchSize: 1, TokenSize: 1, PromptTime: 2, TokenTime: 1},
		{Model: "bloom", Hardware: "a100", TP: 4, PromptSize: 2, BatchSize: 1, TokenSize: 1, PromptTime: 2, TokenTime: 1},
	}
	pairs, err := Fit(rows, 1.1)
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != 2 || pairs[0].Name() != "bloom/a100/tp4" || pairs[1].Name() != "bloom/a100/tp8" || len(pairs[1].PromptTokens) != 2 {
		t.Errorf("got %d pairs: %+v", len(pairs), pairs)
	}
}
