package perf

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func validPair() Pair {
	return Pair{
		ModelName: "m", Hardware: "hw", TP: 8, MixedPenalty: 1.1,
		PromptTokens: []float64{128, 256}, PromptTimeS: []float64{0.05, 0.06},
		DecodeBatch: []float64{1, 2}, DecodeTimeS: []float64{0.03, 0.031},
		BaseContextTokens: 576,
		ContextTokens:     []float64{576}, ContextTimeS: []float64{0.03},
		CompatBatchTokens: []float64{128, 256}, CompatPromptTimeS: []float64{0.05, 0.06}, CompatTokenTimeS: []float64{0.03, 0.031},
	}
}

func TestPairValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(p *Pair)
		want   string // "" for valid
	}{
		{"valid", func(p *Pair) {}, ""},
		{"no model", func(p *Pair) { p.ModelName = " " }, "model"},
		{"no hardware", func(p *Pair) { p.Hardware = "" }, "hardware"},
		{"zero tp", func(p *Pair) { p.TP = 0 }, "tp"},
		{"zero penalty", func(p *Pair) { p.MixedPenalty = 0 }, "mixed_penalty"},
		{"nan penalty", func(p *Pair) { p.MixedPenalty = math.NaN() }, "mixed_penalty"},
		{"zero base", func(p *Pair) { p.BaseContextTokens = 0 }, "base_context_tokens"},
		{"no prompt knots", func(p *Pair) { p.PromptTokens, p.PromptTimeS = nil, nil }, "prompt_tokens: expected at least one knot"},
		{"length mismatch", func(p *Pair) { p.DecodeTimeS = p.DecodeTimeS[:1] }, "decode_time_s has 1 values"},
		{"not increasing", func(p *Pair) { p.DecodeBatch = []float64{2, 2} }, "decode_batch[1]"},
		{"decreasing", func(p *Pair) { p.CompatBatchTokens = []float64{256, 128} }, "compat_batch_tokens[1]"},
		{"nan knot", func(p *Pair) { p.ContextTokens = []float64{math.NaN()} }, "context_tokens[0]"},
		{"zero time", func(p *Pair) { p.CompatTokenTimeS = []float64{0.03, 0} }, "compat_token_time_s[1]"},
		{"negative time", func(p *Pair) { p.ContextTimeS = []float64{-1} }, "context_time_s[0]"},
		{"inf time", func(p *Pair) { p.PromptTimeS = []float64{0.05, math.Inf(1)} }, "prompt_time_s[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := validPair()
			tt.change(&p)
			err := p.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "pair ") {
				t.Errorf("error %q does not name the pair and %q", err, tt.want)
			}
		})
	}
}

func TestModelIsImmutable(t *testing.T) {
	t.Parallel()
	p := validPair()
	for i := range 2 {
		m := bothModels(&p)[i]
		before, _ := m.PromptTime(200)
		q := p
		q.PromptTimeS[0], q.CompatPromptTimeS[0] = 9, 9
		if after, _ := m.PromptTime(200); after != before {
			t.Errorf("model %d (1: compat): changed with the pair's slices: %v → %v", i, before, after)
		}
		p = validPair()
	}
}

func TestTable(t *testing.T) {
	t.Parallel()
	a, b := validPair(), validPair()
	b.Hardware = "other"
	tab := &Table{}
	if _, err := tab.Lookup("m", "hw", 8); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty table: %v", err)
	}
	tab.Add(a)
	tab.Add(b)
	p, err := tab.Lookup(" M ", "HW", 8)
	if err != nil || p.Hardware != "hw" {
		t.Fatalf("Lookup = %v, %v", p, err)
	}
	_, err = tab.Lookup("m", "hw", 4)
	if err == nil || !strings.Contains(err.Error(), "m/hw/tp8, m/other/tp8") || !strings.Contains(err.Error(), "m/hw/tp4") {
		t.Errorf("Lookup error %v does not list the available pairs", err)
	}
	// Add replaces a pair with the same key, case-insensitively.
	c := validPair()
	c.Hardware, c.MixedPenalty = "HW", 2
	tab.Add(c)
	if len(tab.Pairs) != 2 {
		t.Fatalf("%d pairs after replacing, want 2", len(tab.Pairs))
	}
	if p, _ := tab.Lookup("m", "hw", 8); p.MixedPenalty != 2 {
		t.Errorf("penalty %v after replacing, want 2", p.MixedPenalty)
	}
	// Adding pairs: a new key is appended, a known one replaced; Clone is deep.
	d := validPair()
	d.TP = 2
	e := validPair()
	e.MixedPenalty = 3
	tab.Add(d)
	tab.Add(e)
	if len(tab.Pairs) != 3 {
		t.Fatalf("%d pairs after adding, want 3", len(tab.Pairs))
	}
	if p, _ := tab.Lookup("m", "hw", 8); p.MixedPenalty != 3 {
		t.Errorf("penalty %v after adding, want 3", p.MixedPenalty)
	}
	cl := tab.Clone()
	cl.Pairs[0].PromptTimeS[0] = 42
	if tab.Pairs[0].PromptTimeS[0] == 42 {
		t.Error("Clone shares knots")
	}
}

// TestFloorMinIsMax checks floorMin against the builtin max it replaces,
// bit for bit, at the values where they could part (NaN, signed zeros,
// infinities, MinSeconds and its neighbours) and at random ones.
func TestFloorMinIsMax(t *testing.T) {
	t.Parallel()
	ys := []float64{math.NaN(), math.Copysign(0, -1), 0, math.Inf(1), math.Inf(-1), MinSeconds,
		math.Nextafter(MinSeconds, 0), math.Nextafter(MinSeconds, 1), -MinSeconds, 1e-300, -1, 1}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		ys = append(ys, (rng.Float64()-0.5)*math.Pow(10, float64(rng.IntN(20)-12)))
	}
	for _, y := range ys {
		got, want := floorMin(y), max(y, MinSeconds)
		if math.IsNaN(got) && math.IsNaN(want) {
			continue
		}
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("floorMin(%v) = %v, max(y, MinSeconds) = %v", y, got, want)
		}
	}
}

// bothModels are p's default and SplitwiseSim fits, in that order.
func bothModels(p *Pair) [2]IterationModel { return [2]IterationModel{p.Model(), p.CompatModel()} }

// compatIndex is the index in bothModels of the fit compat names.
func compatIndex(compat bool) int {
	if compat {
		return 1
	}
	return 0
}
