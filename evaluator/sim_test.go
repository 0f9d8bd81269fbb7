package evaluator

import (
	"math"
	"splitplan/internal/quantile"
	"testing"

	"splitplan/traces"
)

func mustCluster(t testing.TB, design string, prompt, token int, model string, compat bool) Cluster {
	t.Helper()
	cl, err := TestCluster(design, prompt, token, model, compat)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// onRefCurves is mustCluster (compat off: splitplan's KV-cache sizes) on
// the reference simulator's curves (the compat fit), for the default
// scheduler run on curves whose decode times do not depend on the context.
func onRefCurves(t testing.TB, design string, prompt, token int, model string) Cluster {
	t.Helper()
	cl, ref := mustCluster(t, design, prompt, token, model, false), mustCluster(t, design, prompt, token, model, true)
	for _, p := range [][2]*MachineType{{&cl.PromptType, &ref.PromptType}, {&cl.TokenType, &ref.TokenType}} {
		p[0].Perf, p[0].Provenance, p[0].Power = p[1].Perf, p[1].Provenance, p[1].Power
	}
	return cl
}

func mustEval(t testing.TB, cl Cluster, reqs []traces.Request, opt Options) *Result {
	t.Helper()
	res, err := Evaluate(cl, reqs, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.9f, want %.9f (±%g)", what, got, want, tol)
	}
}

// workedExample simulates SPEC §5's worked example: its cluster (one
// DGX-H100, BLOOM-176B, compat mode), its two requests and the result.
func workedExample(t *testing.T) (Cluster, []traces.Request, *Result) {
	t.Helper()
	cl := mustCluster(t, "Baseline-H100", 1, 0, "bloom-176b", true)
	reqs := []traces.Request{
		{ID: 0, Arrival: 1, PromptTokens: 1000, OutputTokens: 50},
		{ID: 1, Arrival: 2, PromptTokens: 500, OutputTokens: 10},
	}
	return cl, reqs, mustEval(t, cl, reqs, Options{Compat: true})
}

// TestWorkedExample is SPEC §5's worked example, checked against the
// reference simulator: one DGX-H100, BLOOM-176B, compat mode.
func TestWorkedExample(t *testing.T) {
	t.Parallel()
	cl, _, res := workedExample(t)
	a, b := res.Requests[0], res.Requests[1]
	near(t, "TTFT_A", a.TTFTS, 0.129588, 1e-6)
	near(t, "TTFT_B", b.TTFTS, 0.0953458, 1e-6)
	// The cut: A's decode run stops at the first boundary after B arrives,
	// after 25 iterations; B's prompt then runs mixed with A's decode.
	d1, _ := cl.PromptType.Perf.DecodeTime(1, 0)
	d2, _ := cl.PromptType.Perf.DecodeTime(2, 0)
	near(t, "token(1)", d1, 0.035327, 1e-6)
	near(t, "token(2)", d2, 0.0353305, 1e-6)
	cut := 1 + a.TTFTS + 25*d1
	near(t, "cut (B's queueing delay + 2 s)", 2+b.QueueS, 2.0127697, 1e-6)
	near(t, "cut from the decode time", 2+b.QueueS, cut, 1e-9)
	mixed := b.TTFTS - b.QueueS
	near(t, "mixed iteration 1.1 × prompt(501)", mixed, 0.082576, 1e-6)
	// 9 shared iterations at token(2) = 35.3305 ms, then A's last 14 alone.
	bEnd := 2 + b.TTFTS + 9*d2
	near(t, "E2E_B", b.E2ES, bEnd-2, 1e-9)
	near(t, "E2E_A", a.E2ES, bEnd+14*d1-1, 1e-9)
	if got := 1 + 25 + 1 + 9 + 14; got != 50 {
		t.Fatalf("token count %d", got)
	}
	// A's longest gap is the mixed iteration (plus nothing else).
	near(t, "A's max gap", a.MaxGapS, mixed, 1e-9)
	if a.Transferred || b.Transferred || res.Completed != 2 {
		t.Errorf("transferred %v %v, completed %d", a.Transferred, b.Transferred, res.Completed)
	}
	m := res.Machines[0]
	if m.PromptIters != 1 || m.MixedIters != 1 || m.DecodeIters != 25+9+14 {
		t.Errorf("iterations: prompt %d mixed %d decode %d", m.PromptIters, m.MixedIters, m.DecodeIters)
	}
	near(t, "busy time", m.BusyS, res.EndS-1, 1e-9)
}

// TestWorkedExampleGaps: the worked example's every gap, by hand. A's 49
// gaps are 25 decode iterations alone (token(1)), the mixed iteration
// that prefilled B, 9 shared iterations (token(2)) and 14 alone; B's 9
// are the shared ones. The ITL holds those 58 gaps; each request's stall
// is its longest; B's scheduling delay is its wait for the cut.
func TestWorkedExampleGaps(t *testing.T) {
	t.Parallel()
	cl, reqs, res := workedExample(t)
	a, b := res.Requests[0], res.Requests[1]
	d1, _ := cl.PromptType.Perf.DecodeTime(1, 0)
	d2, _ := cl.PromptType.Perf.DecodeTime(2, 0)
	mixed := b.TTFTS - b.QueueS
	itl := &res.ITL
	if itl.Count() != 58 {
		t.Fatalf("ITL: %d gaps, want 58", itl.Count())
	}
	// (A gap is a difference of times: d1 to within rounding.)
	near(t, "ITL min", itl.Min(), min(d1, d2), 1e-12)
	near(t, "ITL max", itl.Max(), mixed, 1e-12)
	near(t, "ITL sum", itl.Sum(), 39*d1+18*d2+mixed, 1e-12)
	// The median gap is a lone decode iteration's, within the sketch's
	// 0.78%; the largest is the mixed iteration.
	if p50 := itl.Quantile(0.5); math.Abs(p50/d1-1) > quantile.RelativeError {
		t.Errorf("ITL P50 %v, want %v within %.2f%%", p50, d1, 100*quantile.RelativeError)
	}
	near(t, "A's stall", a.MaxGapS, mixed, 1e-12)
	near(t, "B's stall", b.MaxGapS, d2, 1e-12)
	near(t, "A's scheduling delay", a.SchedDelayS, 0, 0)
	near(t, "B's scheduling delay", b.SchedDelayS, b.QueueS, 1e-12)
	near(t, "B's queueing delay", b.QueueS, 0.0127697, 1e-6)
	// The default scheduler: the same gaps' count and sum.
	def := mustEval(t, mustCluster(t, "Baseline-H100", 1, 0, "bloom-176b", false), reqs, Options{})
	var sum float64
	for _, r := range def.Requests {
		sum += r.E2ES - r.TTFTS
	}
	if def.ITL.Count() != 58 || math.Abs(def.ITL.Sum()-sum) > 1e-12 {
		t.Errorf("default scheduler: ITL %d gaps adding up to %v s, want 58 adding up to %v", def.ITL.Count(), def.ITL.Sum(), sum)
	}
}

// A request alone on an idle machine gets exactly the performance model's
// latencies.
func TestAloneMatchesPerfModel(t *testing.T) {
	t.Parallel()
	for _, compat := range []bool{false, true} {
		for _, design := range []string{"Baseline-A100", "Baseline-H100"} {
			cl := mustCluster(t, design, 1, 0, "bloom-176b", compat)
			reqs := []traces.Request{{ID: 0, Arrival: 0.5, PromptTokens: 1500, OutputTokens: 20}}
			res := mustEval(t, cl, reqs, Options{Compat: compat})
			r := res.Requests[0]
			p, _ := cl.PromptType.Perf.PromptTime(1500)
			near(t, design+" TTFT", r.TTFTS, p, 1e-12)
			// Decode iterations: compat ignores the context; the default
			// model uses the context at the run's start.
			d, _ := cl.PromptType.Perf.DecodeTime(1, 1501)
			near(t, design+" TBT", r.TBTS, d, 1e-12)
			near(t, design+" E2E", r.E2ES, p+19*d, 1e-9)
			near(t, design+" reference TBT", r.TBTReferenceS, 19*d/20, 1e-12)
			if r.QueueS != 0 || r.Preemptions != 0 {
				t.Errorf("%s: queue %v preemptions %d", design, r.QueueS, r.Preemptions)
			}
		}
	}
}

// In a Splitwise design the second token is delayed by exactly the
// transfer and the wait for the token machine's boundary.
func TestSplitwiseTransferDelay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		design       string
		prompt       int
		compat       bool
		wantTransfer float64
	}{
		{"HH", 1000, false, 0.005},                           // layer-wise on 400 Gbps links
		{"HA", 1000, false, 0.008},                           // slower end: the A100's link
		{"AA", 100, false, 100 * 4_014_080 / 25e9},           // serialized below 512 tokens on 200 Gbps
		{"HH", 1000, true, 1000 * 4_014_080.0 / (200 << 30)}, // compat: 200 GiB/s
	} {
		cl := mustCluster(t, tc.design, 1, 1, "bloom-176b", tc.compat)
		reqs := []traces.Request{{ID: 0, Arrival: 0, PromptTokens: tc.prompt, OutputTokens: 2}}
		res := mustEval(t, cl, reqs, Options{Compat: tc.compat})
		r := res.Requests[0]
		if !r.Transferred || r.PromptMachine != 0 || r.TokenMachine != 1 {
			t.Fatalf("%s: %+v", tc.design, r)
		}
		near(t, tc.design+" transfer", r.TransferS, tc.wantTransfer, 1e-12)
		p, _ := cl.PromptType.Perf.PromptTime(tc.prompt)
		d, _ := cl.TokenType.Perf.DecodeTime(1, int64(tc.prompt)+1)
		near(t, tc.design+" TTFT", r.TTFTS, p, 1e-12)
		near(t, tc.design+" second token", r.E2ES-r.TTFTS, tc.wantTransfer+d, 1e-12)
	}
	// A busy token machine: the decode joins at its next boundary.
	cl := mustCluster(t, "HH", 1, 1, "bloom-176b", true)
	reqs := []traces.Request{
		{ID: 0, Arrival: 0, PromptTokens: 100, OutputTokens: 400},
		{ID: 1, Arrival: 1, PromptTokens: 100, OutputTokens: 3},
	}
	res := mustEval(t, cl, reqs, Options{Compat: true})
	r0, r1 := res.Requests[0], res.Requests[1]
	p, _ := cl.PromptType.Perf.PromptTime(100)
	d1, _ := cl.TokenType.Perf.DecodeTime(1, 0)
	start0 := r0.TTFTS + r0.TransferS // request 0 starts decoding
	ready := 1 + r1.TTFTS + r1.TransferS
	near(t, "TTFT_1", r1.TTFTS, p, 1e-12)
	boundary := start0 + math.Ceil((ready-start0)/d1-1e-9)*d1
	d2, _ := cl.TokenType.Perf.DecodeTime(2, 0)
	near(t, "request 1 end", 1+r1.E2ES, boundary+2*d2, 1e-9)
}
