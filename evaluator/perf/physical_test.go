package perf

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// namedModel is a default model under test with the pair it came from.
type namedModel struct {
	name string
	m    IterationModel
}

// randomPair returns a valid pair with random knots: noisy, often
// decreasing times, knots anywhere, a penalty below or above 1.
func randomPair(rng *rand.Rand) Pair {
	knots := func(n int, x0, step float64) ([]float64, []float64) {
		x, y := make([]float64, n), make([]float64, n)
		for i := range n {
			x0 += step * (0.1 + rng.Float64())
			x[i] = x0
			y[i] = 1e-4 + rng.Float64()*0.2
		}
		return x, y
	}
	p := Pair{ModelName: "rand", Hardware: "hw", TP: 1 + rng.IntN(8),
		MixedPenalty: 0.5 + 1.5*rng.Float64(), BaseContextTokens: 1 + 5000*rng.Float64()}
	p.PromptTokens, p.PromptTimeS = knots(1+rng.IntN(9), 0, 4000)
	p.DecodeBatch, p.DecodeTimeS = knots(1+rng.IntN(7), 0, 16)
	p.ContextTokens, p.ContextTimeS = knots(1+rng.IntN(13), 0, 1500)
	p.CompatBatchTokens, p.CompatPromptTimeS = knots(1+rng.IntN(9), 0, 4000)
	p.CompatTokenTimeS = make([]float64, len(p.CompatBatchTokens))
	for i := range p.CompatTokenTimeS {
		p.CompatTokenTimeS[i] = 0.01 + rng.Float64()*0.1
	}
	return p
}

// physicalModels returns the default models of every built-in pair and of
// 40 random valid pairs.
func physicalModels(t *testing.T) []namedModel {
	t.Helper()
	var out []namedModel
	b := Builtin()
	if len(b.Pairs) != 12 {
		t.Fatalf("%d built-in pairs, want 12", len(b.Pairs))
	}
	for i := range b.Pairs {
		out = append(out, namedModel{b.Pairs[i].Name(), b.Pairs[i].Model()})
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for range 40 {
		p := randomPair(rng)
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		out = append(out, namedModel{"random " + p.Name(), p.Model()})
	}
	return out
}

// notBelow reports whether a ≥ b up to rounding (a relative 1e-12: the
// piecewise-linear interpolation may round by an ulp at a knot).
func notBelow(a, b float64) bool { return a >= b-1e-12*math.Abs(b) }

// TestDefaultModelPhysical checks the physical properties of the default
// model over many random inputs, for every built-in pair (and random
// pairs): iteration time non-decreasing in prompt tokens, in the context,
// in the decodes when each added request brings its context, and in every
// argument of MixedTime; a batch never faster than its slowest member
// alone; a mixed iteration never faster than its prompts or its decodes
// alone; every answer finite and at least MinSeconds.
func TestDefaultModelPhysical(t *testing.T) {
	t.Parallel()
	const n = 3000
	for _, nm := range physicalModels(t) {
		m := nm.m
		rng := rand.New(rand.NewPCG(1, 2))
		fail := func(format string, args ...any) {
			t.Helper()
			t.Errorf("%s: "+format, append([]any{nm.name}, args...)...)
		}
		ok := func(y float64) bool { return y >= MinSeconds && !math.IsInf(y, 0) && !math.IsNaN(y) }
		// contexts draws b requests' contexts (1..40000 tokens each): their
		// sum and the largest.
		contexts := func(b int) (sum, largest int64) {
			for range b {
				c := int64(1 + rng.IntN(40000))
				sum += c
				largest = max(largest, c)
			}
			return sum, largest
		}
		for range n {
			// Prompt tokens.
			tok, k := 1+rng.IntN(70000), 1+rng.IntN(5000)
			p1, _ := m.PromptTime(tok)
			p2, _ := m.PromptTime(tok + k)
			if !ok(p1) || !notBelow(p2, p1) {
				fail("PromptTime(%d) = %v, PromptTime(%d) = %v", tok, p1, tok+k, p2)
			}
			// Decodes.
			b := 1 + rng.IntN(200)
			ctx, largest := contexts(b)
			d, _ := m.DecodeTime(b, ctx)
			if !ok(d) {
				fail("DecodeTime(%d, %d) = %v", b, ctx, d)
			}
			if d1, _ := m.DecodeTime(b, ctx+1); !notBelow(d1, d) {
				fail("DecodeTime(%d, %d) = %v < DecodeTime(%d, %d) = %v", b, ctx+1, d1, b, ctx, d)
			}
			kc := int64(1 + rng.IntN(100000))
			if dk, _ := m.DecodeTime(b, ctx+kc); !notBelow(dk, d) {
				fail("DecodeTime(%d, %d) = %v < DecodeTime(%d, %d) = %v", b, ctx+kc, dk, b, ctx, d)
			}
			c := int64(1 + rng.IntN(40000))
			if db, _ := m.DecodeTime(b+1, ctx+c); !notBelow(db, d) {
				fail("DecodeTime(%d, %d) = %v < DecodeTime(%d, %d) = %v", b+1, ctx+c, db, b, ctx, d)
			}
			if alone, _ := m.DecodeTime(1, largest); !notBelow(d, alone) {
				fail("DecodeTime(%d, %d) = %v < its slowest member alone DecodeTime(1, %d) = %v", b, ctx, d, largest, alone)
			}
			// Mixed.
			pt := 1 + rng.IntN(20000)
			dn := 1 + rng.IntN(200)
			mctx, _ := contexts(dn)
			mx, _ := m.MixedTime(pt, dn, mctx)
			if !ok(mx) {
				fail("MixedTime(%d, %d, %d) = %v", pt, dn, mctx, mx)
			}
			if pa, _ := m.PromptTime(pt); !notBelow(mx, pa) {
				fail("MixedTime(%d, %d, %d) = %v < PromptTime(%d) = %v", pt, dn, mctx, mx, pt, pa)
			}
			if da, _ := m.DecodeTime(dn, mctx); !notBelow(mx, da) {
				fail("MixedTime(%d, %d, %d) = %v < DecodeTime(%d, %d) = %v", pt, dn, mctx, mx, dn, mctx, da)
			}
			if y, _ := m.MixedTime(pt+k, dn, mctx); !notBelow(y, mx) {
				fail("MixedTime(%d, %d, %d) = %v < MixedTime(%d, %d, %d) = %v", pt+k, dn, mctx, y, pt, dn, mctx, mx)
			}
			if y, _ := m.MixedTime(pt, dn+1, mctx+c); !notBelow(y, mx) {
				fail("MixedTime(%d, %d, %d) = %v < MixedTime(%d, %d, %d) = %v", pt, dn+1, mctx+c, y, pt, dn, mctx, mx)
			}
			if y, _ := m.MixedTime(pt, dn, mctx+kc); !notBelow(y, mx) {
				fail("MixedTime(%d, %d, %d) = %v < MixedTime(%d, %d, %d) = %v", pt, dn, mctx+kc, y, pt, dn, mctx, mx)
			}
			if t.Failed() {
				return
			}
		}
		// Unknown context (0): every request at the base context, so still
		// non-decreasing in the batch.
		for b := 1; b < 300; b++ {
			d0, _ := m.DecodeTime(b, 0)
			d1, _ := m.DecodeTime(b+1, 0)
			if !ok(d0) || !notBelow(d1, d0) {
				t.Fatalf("%s: DecodeTime(%d, 0) = %v, DecodeTime(%d, 0) = %v", nm.name, b, d0, b+1, d1)
			}
		}
	}
}

// TestDefaultModelIssueExamples pins the four non-physical answers of the
// former default model (batch-1 context correction multiplied by the
// batch size), issue 10 item 5.
func TestDefaultModelIssueExamples(t *testing.T) {
	t.Parallel()
	tab := Builtin()
	model := func(name string, tp int) IterationModel {
		t.Helper()
		p, err := tab.Lookup(name, "h100-80gb", tp)
		if err != nil {
			t.Fatal(err)
		}
		return p.Model()
	}
	at := func(m IterationModel, b int, ctx int64) float64 {
		y, _ := m.DecodeTime(b, ctx)
		return y
	}
	bloom := model("bloom-176b", 8)
	// 1. More context took less time: 32 requests, 60000 context tokens in
	// all, 31.3 ms against 59.3 ms at 20000.
	if a, b := at(bloom, 32, 20000), at(bloom, 32, 60000); !(b >= a) {
		t.Errorf("bloom-176b/h100: DecodeTime(32, 60000) = %.4f s < DecodeTime(32, 20000) = %.4f s", b, a)
	}
	// 2. A batch faster than one of its members alone: 40 requests of 1500
	// context tokens in 28.3 ms against 36.1 ms for one at the base
	// context.
	b40 := at(bloom, 40, 60000)
	for _, one := range []struct {
		name string
		y    float64
	}{{"DecodeTime(1, base)", at(bloom, 1, 0)}, {"DecodeTime(1, 1500)", at(bloom, 1, 1500)}} {
		if !(b40 >= one.y) {
			t.Errorf("bloom-176b/h100: DecodeTime(40, 60000) = %.4f s < %s = %.4f s", b40, one.name, one.y)
		}
	}
	// 3. Llama2-70B, 64 requests of 1000 context tokens: 177 ms at tp 8
	// against 27.7 ms at tp 4, whose base-context times differ by 5%
	// (50.2 and 52.4 ms). Each is at least its base-context time (1000 >
	// 576 tokens per request), and they stay within 25% of each other.
	tp8, tp4 := model("llama2-70b", 8), model("llama2-70b", 4)
	y8, y4 := at(tp8, 64, 64000), at(tp4, 64, 64000)
	if base := at(tp8, 64, 0); !(y8 >= base) {
		t.Errorf("llama2-70b/h100/tp8: DecodeTime(64, 64000) = %.4f s < at the base context %.4f s", y8, base)
	}
	if base := at(tp4, 64, 0); !(y4 >= base) {
		t.Errorf("llama2-70b/h100/tp4: DecodeTime(64, 64000) = %.4f s < at the base context %.4f s", y4, base)
	}
	if r := y8 / y4; r < 0.8 || r > 1.25 {
		t.Errorf("llama2-70b/h100: DecodeTime(64, 64000) tp8 %.4f s / tp4 %.4f s = %.2f, want within 0.8..1.25", y8, y4, r)
	}
}

// TestDefaultModelExtrapolation checks the extrapolation flags: the batch
// outside the decode knots, the mean context outside the context knots,
// the prompt tokens outside the prompt knots.
func TestDefaultModelExtrapolation(t *testing.T) {
	t.Parallel()
	p, err := Builtin().Lookup("bloom-176b", "h100-80gb", 8)
	if err != nil {
		t.Fatal(err)
	}
	m := p.Model()
	tests := []struct {
		name string
		ex   func() bool
		want bool
	}{
		{"decode inside", func() bool { _, ex := m.DecodeTime(8, 8*1000); return ex }, false},
		{"decode base context", func() bool { _, ex := m.DecodeTime(64, 0); return ex }, false},
		{"decode large batch", func() bool { _, ex := m.DecodeTime(65, 65*1000); return ex }, true},
		{"decode long context", func() bool { _, ex := m.DecodeTime(8, 8*9000); return ex }, true},
		{"decode short context", func() bool { _, ex := m.DecodeTime(8, 8*100); return ex }, true},
		{"prompt inside", func() bool { _, ex := m.PromptTime(1000); return ex }, false},
		{"prompt above", func() bool { _, ex := m.PromptTime(40000); return ex }, true},
		{"mixed inside", func() bool { _, ex := m.MixedTime(1000, 8, 8*1000); return ex }, false},
		{"mixed long context", func() bool { _, ex := m.MixedTime(1000, 8, 8*9000); return ex }, true},
		{"mixed many decodes", func() bool { _, ex := m.MixedTime(1000, 100, 100*1000); return ex }, true},
	}
	for _, tt := range tests {
		if got := tt.ex(); got != tt.want {
			t.Errorf("%s: extrapolated %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestContextSlopeBuiltin checks that every built-in pair has a positive
// KV-cache slope of a plausible size.
func TestContextSlopeBuiltin(t *testing.T) {
	t.Parallel()
	for _, p := range Builtin().Pairs {
		s := p.ContextSlope()
		// Between 1e-8 and 1e-6 s per token: 0.1–10 ms per 10k tokens.
		if !(s > 1e-8 && s < 1e-6) {
			t.Errorf("%s: context slope %v s/token", p.Name(), s)
		}
	}
}

func TestContextSlope(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		c    Curve
		want float64
	}{
		{"line", Curve{X: []float64{0, 1, 2}, Y: []float64{1, 3, 5}}, 2},
		{"least squares", Curve{X: []float64{0, 1, 2, 3}, Y: []float64{0, 2, 1, 3}}, 0.8},
		{"decreasing clamps to zero", Curve{X: []float64{0, 1, 2}, Y: []float64{5, 3, 1}}, 0},
		{"one knot", Curve{X: []float64{7}, Y: []float64{1}}, 0},
		{"empty", Curve{}, 0},
	}
	for _, tt := range tests {
		if got := contextSlope(tt.c); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: slope %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestIsotonic(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want []float64 }{
		{nil, []float64{}},
		{[]float64{1}, []float64{1}},
		{[]float64{1, 2, 3}, []float64{1, 2, 3}},
		{[]float64{3, 1}, []float64{2, 2}},
		{[]float64{1, 3, 2, 4}, []float64{1, 2.5, 2.5, 4}},
		{[]float64{4, 3, 2, 1}, []float64{2.5, 2.5, 2.5, 2.5}},
		{[]float64{1, 5, 0, 6, 2, 2}, []float64{1, 2.5, 2.5, 10.0 / 3, 10.0 / 3, 10.0 / 3}},
	}
	for _, tt := range tests {
		in := slices.Clone(tt.in)
		got := isotonic(in)
		if !slices.Equal(in, tt.in) {
			t.Errorf("isotonic changed its input %v to %v", tt.in, in)
		}
		if len(got) != len(tt.want) {
			t.Errorf("isotonic(%v) = %v, want %v", tt.in, got, tt.want)
			continue
		}
		for i := range got {
			if math.Abs(got[i]-tt.want[i]) > 1e-12 {
				t.Errorf("isotonic(%v) = %v, want %v", tt.in, got, tt.want)
				break
			}
		}
	}
	// Random inputs: the result is non-decreasing, keeps the sum (the
	// pooled means), and no non-decreasing sequence tried is closer.
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		y := make([]float64, 1+rng.IntN(12))
		for i := range y {
			y[i] = rng.NormFloat64()
		}
		got := isotonic(y)
		var sumIn, sumOut, sse float64
		for i := range y {
			sumIn, sumOut = sumIn+y[i], sumOut+got[i]
			sse += (got[i] - y[i]) * (got[i] - y[i])
			if i > 0 && got[i] < got[i-1] {
				t.Fatalf("isotonic(%v) = %v decreases", y, got)
			}
		}
		if math.Abs(sumIn-sumOut) > 1e-9 {
			t.Fatalf("isotonic(%v) = %v changes the sum", y, got)
		}
		// A running maximum is non-decreasing too, never closer.
		run, rsse := math.Inf(-1), 0.0
		for _, v := range y {
			run = max(run, v)
			rsse += (run - v) * (run - v)
		}
		if sse > rsse+1e-9 {
			t.Fatalf("isotonic(%v) = %v: squared error %v above the running maximum's %v", y, got, sse, rsse)
		}
	}
}

func TestConsistent(t *testing.T) {
	t.Parallel()
	r := ProfileRow{PromptTime: 1, TokenSize: 10, TokenTime: 0.1} // prompt + decodes: 2 s
	for _, tt := range []struct {
		e2e  float64
		want bool
	}{{0, true}, {0.5, true}, {2, true}, {4, true}, {4.01, false}, {30, false}} {
		r.E2ETime = tt.e2e
		if got := Consistent(r); got != tt.want {
			t.Errorf("Consistent(e2e %v) = %v, want %v", tt.e2e, got, tt.want)
		}
	}
	// The shipped profile: exactly the 15 runs of Llama2-70B at tp 2 with
	// 64 requests (on A100, H100 and power-capped H100) are not.
	var bad []ProfileRow
	for _, r := range realRows(t) {
		if !Consistent(r) {
			bad = append(bad, r)
		}
	}
	if len(bad) != 15 {
		t.Errorf("%d inconsistent rows, want 15", len(bad))
	}
	for _, r := range bad {
		if r.Model != "llama2-70b" || r.TP != 2 || r.BatchSize != 64 {
			t.Errorf("inconsistent row %+v", r)
		}
	}
}

// TestFitCompatKeepsEveryRow checks that the compat curves still use the
// runs the default fit leaves out.
func TestFitCompatKeepsEveryRow(t *testing.T) {
	t.Parallel()
	p := realPair(t, "llama2-70b", "h100-80gb", 2)
	if last := p.CompatBatchTokens[len(p.CompatBatchTokens)-1]; last != 512*64 {
		t.Errorf("compat knots end at %v, want %v", last, 512*64)
	}
	if last := p.PromptTokens[len(p.PromptTokens)-1]; last != 512*32 {
		t.Errorf("default prompt knots end at %v, want %v", last, 512*32)
	}
}

// TestTablesAreTheCurves checks that the default model's tables (D0 by
// batch size, PromptTime by prompt size) give, bit for bit, what the knot
// search and interpolation give, at every whole size in the table and
// past it, for the built-in and random pairs; and that curves whose knots
// run past maxDecodeTable and maxPromptTable are tabulated only up to
// them.
func TestTablesAreTheCurves(t *testing.T) {
	t.Parallel()
	// d0 and prompt are the two tabulated functions, from the table and
	// from the curve.
	d0 := func(m *defaultModel, b int) (float64, bool) { return m.d0At(b) }
	d0Curve := func(m *defaultModel, b int) (float64, bool) { return m.decode0.At(float64(b)) }
	prompt := func(m *defaultModel, n int) (float64, bool) { return m.PromptTime(n) }
	promptCurve := func(m *defaultModel, n int) (float64, bool) {
		if n <= 0 {
			return 0, false
		}
		y, ex := m.prompt.At(float64(n))
		return max(y, MinSeconds), ex
	}
	// same fails the test where table and curve differ at one of xs.
	same := func(name, what string, m *defaultModel, table, curve func(*defaultModel, int) (float64, bool), xs []int) {
		t.Helper()
		for _, x := range xs {
			y, ex := table(m, x)
			wy, wex := curve(m, x)
			if math.Float64bits(y) != math.Float64bits(wy) || ex != wex {
				t.Fatalf("%s: %s(%d) = %v, %v; the curve gives %v, %v", name, what, x, y, ex, wy, wex)
			}
		}
	}
	// upTo is -2 … n-1.
	upTo := func(n int) []int {
		xs := make([]int, 0, n+2)
		for x := -2; x < n; x++ {
			xs = append(xs, x)
		}
		return xs
	}
	for _, nm := range physicalModels(t) {
		m, ok := nm.m.(*defaultModel)
		if !ok {
			t.Fatalf("%s: model is %T, want *defaultModel", nm.name, nm.m)
		}
		if len(m.d0Tab) == 0 || len(m.pTab) == 0 {
			t.Errorf("%s: tables of %d decode and %d prompt entries", nm.name, len(m.d0Tab), len(m.pTab))
		}
		same(nm.name, "D0", m, d0, d0Curve, upTo(len(m.d0Tab)+50))
		same(nm.name, "PromptTime", m, prompt, promptCurve, upTo(len(m.pTab)+50))
	}
	p, err := Builtin().Lookup("bloom-176b", "h100-80gb", 8)
	if err != nil {
		t.Fatal(err)
	}
	q := *p
	q.DecodeBatch = append(append([]float64(nil), p.DecodeBatch...), 100000)
	q.DecodeTimeS = append(append([]float64(nil), p.DecodeTimeS...), 50)
	m := q.Model().(*defaultModel)
	if len(m.d0Tab) != maxDecodeTable+1 {
		t.Errorf("decode table of %d entries for a last knot at 100000, want %d", len(m.d0Tab), maxDecodeTable+1)
	}
	if last := p.PromptTokens[len(p.PromptTokens)-1]; last <= maxPromptTable || len(m.pTab) != maxPromptTable+1 {
		t.Errorf("prompt table of %d entries for a last knot at %v, want %d", len(m.pTab), last, maxPromptTable+1)
	}
	same("long knots", "D0", m, d0, d0Curve, []int{maxDecodeTable, maxDecodeTable + 1, 50000, 100000, 200000})
	same("long knots", "PromptTime", m, prompt, promptCurve, []int{maxPromptTable, maxPromptTable + 1, 20000, 32768, 100000})
}
