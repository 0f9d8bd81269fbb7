package evaluator

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"splitplan/internal/quantile"
	"strings"
	"testing"

	"splitplan/traces"
)

func TestParsePolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want PolicyKind
		err  string
	}{
		{"", PolicyMixed, ""},
		{"mixed", PolicyMixed, ""},
		{" Orca ", PolicyMixed, ""},
		{"request-level", PolicyRequestLevel, ""},
		{"FasterTransformer", PolicyRequestLevel, ""},
		{"prefill-first", PolicyPrefillFirst, ""},
		{"vllm", PolicyPrefillFirst, ""},
		{"SARATHI", PolicySarathi, ""},
		{"sarathi-serve", PolicySarathi, ""},
		{"fcfs", 0, `unknown batching policy "fcfs" (valid: mixed, request-level, prefill-first, sarathi)`},
	} {
		got, err := ParsePolicy(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ParsePolicy(%q) error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got.Kind != tc.want {
			t.Errorf("ParsePolicy(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if got := strings.Join(Policies(), ","); got != "mixed,request-level,prefill-first,sarathi" {
		t.Errorf("Policies() = %s", got)
	}
}

func TestPolicyOptionErrors(t *testing.T) {
	t.Parallel()
	cl := mustCluster(t, "Baseline-H100", 1, 0, "bloom-176b", false)
	ok := []traces.Request{{ID: 0, Arrival: 0, PromptTokens: 10, OutputTokens: 2}}
	for _, tc := range []struct {
		name string
		pol  Policy
		want string
	}{
		{"unknown policy", Policy{Kind: 7}, `unknown batching policy 7 (valid: mixed, request-level, prefill-first, sarathi)`},
		{"negative budget", Policy{Kind: PolicySarathi, TokenBudget: -5}, "token budget must be at least 1"},
		{"negative TBT SLO", Policy{Kind: PolicySarathi, TBTSLOS: -0.1}, "TBT SLO must be zero"},
		{"NaN TBT SLO", Policy{Kind: PolicySarathi, TBTSLOS: math.NaN()}, "TBT SLO must be zero"},
		{"TBT SLO below one decode", Policy{Kind: PolicySarathi, TBTSLOS: 0.001}, "sarathi: a TBT SLO of 0.001 s is shorter than one decode iteration on DGX-H100"},
	} {
		_, err := Evaluate(withPolicy(cl, tc.pol), ok, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to say %q", tc.name, err, tc.want)
		}
	}
}

// TestPolicyTimelines: one DGX-H100 (BLOOM-176B, compat model, so decode
// times do not depend on the context). A (100 prompt, 50 output tokens)
// decodes alone when B and C (2000-token prompts, 2 output tokens) arrive
// at 0.5 s; B's arrival cuts A's decode run at the next boundary, except
// under request-level batching. A's longest gap between tokens shows each
// policy's stalls.
func TestPolicyTimelines(t *testing.T) {
	t.Parallel()
	cl := mustCluster(t, "Baseline-H100", 1, 0, "bloom-176b", true)
	pm := cl.PromptType.Perf
	p := func(n int) float64 { d, _ := pm.PromptTime(n); return d }
	dec := func(n int) float64 { d, _ := pm.DecodeTime(n, 0); return d }
	mix := func(prompt, decodes int) float64 { d, _ := pm.MixedTime(prompt, decodes, 0); return d }
	reqs := []traces.Request{
		{ID: 0, Arrival: 0, PromptTokens: 100, OutputTokens: 50},
		{ID: 1, Arrival: 0.5, PromptTokens: 2000, OutputTokens: 2},
		{ID: 2, Arrival: 0.5001, PromptTokens: 2000, OutputTokens: 2},
	}
	// A's run is cut at the first boundary after 0.5 s.
	n := math.Ceil((0.5 - p(100)) / dec(1))
	cut := p(100) + n*dec(1)
	aAlone := p(100) + 49*dec(1) // A's end when nothing interrupts it
	for _, tc := range []struct {
		policy PolicyKind
		// aMaxGap is A's longest gap between two tokens.
		aMaxGap float64
		// bTTFT is B's time to first token.
		bTTFT                 float64
		prompt, decode, mixed int64
		why                   string
	}{
		{PolicyMixed, mix(2000, 2), cut - 0.5 + mix(2000, 1), 1, 47, 2,
			"B's prompt runs with A's decode (C does not fit the 2048-token cap), then C's with A's and B's"},
		{PolicyRequestLevel, dec(1), aAlone - 0.5 + p(2000), 3, 51, 0,
			"A's batch runs to completion; B and C each run alone after it (together they pass 2048 tokens)"},
		{PolicyPrefillFirst, 2*p(2000) + dec(3), cut - 0.5 + p(2000), 3, 49, 0,
			"B's and C's prompt-only iterations both pause A: a generation stall of two prompt iterations"},
		{PolicySarathi, mix(511, 1), cut - 0.5 + 4*mix(511, 1), 1, 41, 8,
			"B's prompt goes in 511-token chunks beside A's decode (512-token budget); its last chunk of 467 tokens shares the 4th iteration with C's first 44"},
	} {
		res := checkInvariants(t, tc.policy.String(), withPolicy(cl, Policy{Kind: tc.policy}), reqs, Options{Compat: true})
		a, b := res.Requests[0], res.Requests[1]
		near(t, tc.policy.String()+": A's max gap ("+tc.why+")", a.MaxGapS, tc.aMaxGap, 1e-9)
		near(t, tc.policy.String()+": B's TTFT", b.TTFTS, tc.bTTFT, 1e-9)
		m := res.Machines[0]
		if m.PromptIters != tc.prompt || m.DecodeIters != tc.decode || m.MixedIters != tc.mixed {
			t.Errorf("%s: iterations prompt %d decode %d mixed %d, want %d %d %d", tc.policy,
				m.PromptIters, m.DecodeIters, m.MixedIters, tc.prompt, tc.decode, tc.mixed)
		}
	}
}

// TestPrefillFirstStalls: with a long prompt arriving while requests
// decode, a running request's longest gap reaches the prompt iteration.
func TestPrefillFirstStalls(t *testing.T) {
	t.Parallel()
	cl := mustCluster(t, "Baseline-A100", 1, 0, "bloom-176b", false)
	var reqs []traces.Request
	for i := range 8 {
		reqs = append(reqs, traces.Request{ID: i, Arrival: 0.01 * float64(i), PromptTokens: 200, OutputTokens: 300})
	}
	reqs = append(reqs, traces.Request{ID: 8, Arrival: 3, PromptTokens: 6000, OutputTokens: 5})
	prompt, _ := cl.PromptType.Perf.PromptTime(6000)
	res := checkInvariants(t, "prefill-first", withPolicy(cl, Policy{Kind: PolicyPrefillFirst}), reqs, Options{})
	for _, r := range res.Requests[:8] {
		if r.MaxGapS < prompt {
			t.Errorf("request %d: max gap %.4f s below the 6000-token prompt iteration (%.4f s)", r.ID, r.MaxGapS, prompt)
		}
	}
	if m := res.Machines[0]; m.MixedIters != 0 {
		t.Errorf("prefill-first ran %d mixed iterations", m.MixedIters)
	}
	// Sarathi keeps the same requests' gaps at one 512-token iteration
	// plus the re-read overhead of the prompt's later chunks.
	sr := checkInvariants(t, "sarathi", withPolicy(cl, Policy{Kind: PolicySarathi}), reqs, Options{})
	for _, r := range sr.Requests[:8] {
		if r.MaxGapS > prompt/4 {
			t.Errorf("sarathi request %d: max gap %.4f s, prompt iteration %.4f s", r.ID, r.MaxGapS, prompt)
		}
	}
}

// TestSarathiChunks: a prompt alone is prefilled in budget-sized chunks,
// each costing max(T(c), T(prior+c) − T(prior)) on the prompt curve T;
// its first token comes when the last chunk ends.
func TestSarathiChunks(t *testing.T) {
	t.Parallel()
	cl := mustCluster(t, "Baseline-H100", 1, 0, "bloom-176b", false)
	p := func(n int) float64 { d, _ := cl.PromptType.Perf.PromptTime(n); return d }
	reqs := []traces.Request{{ID: 0, Arrival: 1, PromptTokens: 4000, OutputTokens: 3}}
	res := checkInvariants(t, "chunks", withPolicy(cl, Policy{Kind: PolicySarathi, TokenBudget: 1024}), reqs, Options{})
	want, prior := 0.0, 0
	for _, c := range []int{1024, 1024, 1024, 928} {
		want += max(p(c), p(prior+c)-p(prior))
		prior += c
	}
	r := res.Requests[0]
	near(t, "TTFT of 4 chunks", r.TTFTS, want, 1e-12)
	if r.TTFTS <= p(4000) {
		t.Errorf("chunked TTFT %.4f s should exceed the whole prompt's %.4f s: chunks re-read the KV-cache", r.TTFTS, p(4000))
	}
	if e, _ := chunkExtra(cl.PromptType.Perf, 2048, 1024); !(e > 0) {
		t.Errorf("a 1024-token chunk after 2048 tokens has no re-read overhead (%v)", e)
	}
	m := res.Machines[0]
	if m.PromptIters != 4 || m.MixedIters != 0 || m.DecodeIters != 2 {
		t.Errorf("iterations: prompt %d mixed %d decode %d", m.PromptIters, m.MixedIters, m.DecodeIters)
	}
	if got := len(m.BatchTokens); got != 3 || m.BatchTokens[0].Tokens != 1 || m.BatchTokens[1].Tokens != 928 || m.BatchTokens[2].Tokens != 1024 {
		t.Errorf("batch tokens %+v", m.BatchTokens)
	}
}

// TestSarathiBudget: no iteration of a baseline machine holds more tokens
// than the budget, whichever the load.
func TestSarathiBudget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		budget int
		rps    float64
		kv     int64
	}{{64, 4, 0}, {512, 4, 0}, {512, 12, 20000}, {2048, 8, 0}} {
		cl := mustCluster(t, "Baseline-A100", 2, 0, "bloom-176b", false)
		reqs := randomRequests(300, tc.rps, 4000, 200, 11)
		res := checkInvariants(t, "budget", withPolicy(cl, Policy{Kind: PolicySarathi, TokenBudget: tc.budget}), reqs, Options{KVCapacityTokens: tc.kv})
		for _, m := range res.Machines {
			if top := m.BatchTokens[len(m.BatchTokens)-1].Tokens; top > tc.budget {
				t.Errorf("budget %d: machine %d ran an iteration of %d tokens", tc.budget, m.ID, top)
			}
			if m.MixedIters == 0 {
				t.Errorf("budget %d: machine %d never mixed chunks with decodes", tc.budget, m.ID)
			}
		}
	}
}

// TestSarathiTBTSLO: with a TBT SLO the budget is derived from the
// performance model and, at a load the machine sustains (its decodes fit
// the budget), no running request's gap exceeds the SLO.
func TestSarathiTBTSLO(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		design string
		slo    float64
		rps    float64
	}{{"Baseline-H100", 0.1, 1}, {"Baseline-A100", 0.15, 1}, {"Baseline-H100", 0.06, 0.4}} {
		cl := mustCluster(t, tc.design, 1, 0, "bloom-176b", false)
		cl.Policy = Policy{Kind: PolicySarathi, TBTSLOS: tc.slo}
		opt := Options{}
		budget, _, err := SarathiBudgets(cl)
		if err != nil {
			t.Fatal(err)
		}
		if budgetTime(cl.PromptType.Perf, budget) > tc.slo || budgetTime(cl.PromptType.Perf, budget+1) <= tc.slo {
			t.Errorf("%s: budget %d is not the largest within %g s", tc.design, budget, tc.slo)
		}
		reqs := randomRequests(200, tc.rps, 4000, 300, 5)
		res := checkInvariants(t, tc.design, cl, reqs, opt)
		worst := 0.0
		for _, r := range res.Requests {
			worst = max(worst, r.MaxGapS)
			if r.MaxGapS > tc.slo+1e-9 {
				t.Errorf("%s: request %d has a %.4f s gap over the %g s SLO", tc.design, r.ID, r.MaxGapS, tc.slo)
			}
		}
		m := res.Machines[0]
		if top := m.BatchTokens[len(m.BatchTokens)-1].Tokens; top > budget {
			t.Errorf("%s: an iteration of %d tokens over the derived budget %d", tc.design, top, budget)
		}
		t.Logf("%s, TBT SLO %g s: budget %d tokens, worst gap %.4f s", tc.design, tc.slo, budget, worst)
	}
}

// TestRequestLevelLowestThroughput: on the same machines and trace,
// request-level batching takes the longest to serve the trace.
func TestRequestLevelLowestThroughput(t *testing.T) {
	t.Parallel()
	cl := mustCluster(t, "Baseline-A100", 2, 0, "bloom-176b", false)
	reqs := randomRequests(400, 6, 2500, 250, 21)
	end := map[PolicyKind]float64{}
	for _, p := range PolicyKinds() {
		end[p] = checkInvariants(t, p.String(), withPolicy(cl, Policy{Kind: p}), reqs, Options{}).EndS
	}
	for _, p := range PolicyKinds() {
		if p != PolicyRequestLevel && !(end[PolicyRequestLevel] > 1.5*end[p]) {
			t.Errorf("request-level finished at %.1f s, %s at %.1f s: want request-level clearly last", end[PolicyRequestLevel], p, end[p])
		}
	}
	t.Logf("last request done at: %v", end)
}

// TestPolicyConservation: under every policy every request finishes once
// with exactly its output, memory drains and never passes capacity —
// also with tight memory and with Splitwise machines borrowed into the
// mixed pool (where the policy applies).
func TestPolicyConservation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		design        string
		prompt, token int
		model         string
		compat        bool
		kvTokens      int64
		rps           float64
		borrows       bool
	}{
		{"baseline", "Baseline-A100", 4, 0, "bloom-176b", false, 0, 20, false},
		{"baseline tight memory", "Baseline-H100", 2, 0, "bloom-176b", true, 9000, 20, false},
		{"baseline llama tight", "Baseline-H100", 2, 0, "llama2-70b", false, 5000, 30, false},
		{"HH borrowing", "HH", 2, 1, "bloom-176b", false, 0, 30, true},
		{"HA tight memory", "HA", 2, 2, "llama2-70b", false, 8000, 30, true},
		{"HHcap overloaded", "HHcap", 1, 1, "bloom-176b", false, 0, 40, true},
		{"AA tiny token pool", "AA", 4, 1, "bloom-176b", true, 6000, 30, true},
	} {
		reqs := randomRequests(500, tc.rps, 4000, 300, 7)
		cl := mustCluster(t, tc.design, tc.prompt, tc.token, tc.model, tc.compat)
		var mixedCSV []byte
		for _, p := range PolicyKinds() {
			name := tc.name + " " + p.String()
			opt := Options{Compat: tc.compat, KVCapacityTokens: tc.kvTokens}
			cl := withPolicy(cl, Policy{Kind: p})
			res := checkInvariants(t, name, cl, reqs, opt)
			borrowed := 0
			for _, r := range res.Requests {
				if r.Borrowed {
					borrowed++
				}
			}
			if tc.borrows && borrowed == 0 {
				t.Errorf("%s: no request was borrowed into the mixed pool", name)
			}
			var buf bytes.Buffer
			if err := WriteRequestsCSV(&buf, res); err != nil {
				t.Fatal(err)
			}
			again := mustEval(t, cl, reqs, opt)
			var buf2 bytes.Buffer
			WriteRequestsCSV(&buf2, again)
			if !bytes.Equal(buf.Bytes(), buf2.Bytes()) {
				t.Errorf("%s: two runs differ", name)
			}
			// The policy governs baseline and mixed-pool machines, so it
			// changes the outcome wherever such machines work.
			if p == PolicyMixed {
				mixedCSV = buf.Bytes()
			} else if bytes.Equal(buf.Bytes(), mixedCSV) {
				t.Errorf("%s: same results as the mixed policy", name)
			}
		}
	}
}

// TestPolicyOnlyInMixedPool: a Splitwise cluster large enough never to
// borrow runs its prompt and token pools by mixed batching's rules,
// whatever the policy.
func TestPolicyOnlyInMixedPool(t *testing.T) {
	t.Parallel()
	cl := mustCluster(t, "HH", 6, 4, "bloom-176b", false)
	reqs := randomRequests(300, 5, 3000, 200, 9)
	var want []byte
	for _, p := range PolicyKinds() {
		res := checkInvariants(t, p.String(), withPolicy(cl, Policy{Kind: p}), reqs, Options{})
		if res.PoolMoves != 0 {
			t.Fatalf("%s: %d pool moves; the cluster should not borrow", p, res.PoolMoves)
		}
		var buf bytes.Buffer
		WriteRequestsCSV(&buf, res)
		WriteMachinesCSV(&buf, res)
		if want == nil {
			want = buf.Bytes()
		} else if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("%s changed a Splitwise cluster that never used its mixed pool", p)
		}
	}
}

// percentile is the nearest-rank p-quantile (0 < p ≤ 1) of v.
func percentile(v []float64, p float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(i, 0)]
}

// TestSarathiSustainsHigherRate: the conversation workload on 10 H100
// baseline machines at rising rates, with a strict TBT criterion (P99 of
// the per-request TBT at most 1.7 × one uncontended decode iteration).
// Sarathi sustains a higher rate than mixed batching and prefill-first,
// and its P99 of the longest gap between tokens is a fraction of theirs at
// every rate.
func TestSarathiSustainsHigherRate(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("real workload")
	}
	d, err := traces.Builtin("conversation")
	if err != nil {
		t.Fatal(err)
	}
	cl := mustCluster(t, "Baseline-H100", 10, 0, "bloom-176b", false)
	one, _ := cl.PromptType.Perf.DecodeTime(1, 0)
	limit := 1.7 * one
	rates := []float64{10, 14, 18, 22, 26}
	best := map[PolicyKind]float64{} // highest rate up to which every rate passes
	failed := map[PolicyKind]bool{}
	for _, rps := range rates {
		reqs, err := traces.Synthesize(d, rps, 60, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		gap := map[PolicyKind]float64{}
		for _, p := range []PolicyKind{PolicyMixed, PolicyPrefillFirst, PolicySarathi} {
			res := mustEval(t, withPolicy(cl, Policy{Kind: p}), reqs, Options{})
			var tbt, gaps []float64
			for _, r := range res.Requests {
				if r.OutputTokens > 1 {
					tbt = append(tbt, r.TBTS)
					gaps = append(gaps, r.MaxGapS)
				}
			}
			p99 := percentile(tbt, 0.99)
			gap[p] = percentile(gaps, 0.99)
			if res.Completed != len(reqs) || p99 > limit {
				failed[p] = true
			} else if !failed[p] {
				best[p] = rps
			}
			t.Logf("%2.0f req/s %-13s P99 TBT %.4f s, P99 max gap %.4f s", rps, p, p99, gap[p])
		}
		if !(gap[PolicySarathi] < 0.5*gap[PolicyMixed]) || !(gap[PolicySarathi] < 0.5*gap[PolicyPrefillFirst]) {
			t.Errorf("%g req/s: P99 max gap sarathi %.4f s, mixed %.4f s, prefill-first %.4f s", rps, gap[PolicySarathi], gap[PolicyMixed], gap[PolicyPrefillFirst])
		}
	}
	t.Logf("highest rate with P99 TBT ≤ %.4f s: %v", limit, best)
	if !(best[PolicySarathi] > best[PolicyMixed]) || !(best[PolicySarathi] > best[PolicyPrefillFirst]) {
		t.Errorf("sustained rates %v: sarathi should sustain the most", best)
	}
}

// withPolicy returns cl with batching policy p.
func withPolicy(cl Cluster, p Policy) Cluster {
	cl.Policy = p
	return cl
}

// TestRunEndShortcutsChangeNothing: the run end's shortcuts (a decode
// batch that continues with the decodes queued at its machine, or that
// waiting prompts join under mixed batching) give the same simulation as
// forming every batch with the policy, over random workloads, designs,
// policies, caps and abort delays.
func TestRunEndShortcutsChangeNothing(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(13, 13))
	designs := []struct {
		name          string
		prompt, token int
	}{{"Baseline-H100", 3, 0}, {"Splitwise-HH", 2, 1}, {"Splitwise-HA", 1, 2}, {"Baseline-A100", 1, 0}, {"Splitwise-AA", 2, 2}}
	kinds := []PolicyKind{PolicyMixed, PolicyMixed, PolicySarathi, PolicyPrefillFirst, PolicyRequestLevel}
	for i := 0; i < 40; i++ {
		d := designs[i%len(designs)]
		cl := mustCluster(t, d.name, d.prompt, d.token, "bloom-176b", false)
		cl.Policy = Policy{Kind: kinds[i%len(kinds)]}
		reqs := randomRequests(150+rng.IntN(150), 2+10*rng.Float64(), 1+rng.IntN(6000), 1+rng.IntN(600), uint64(100+i))
		opt := Options{}
		if i%4 == 1 {
			opt.MaxBatchRequests, opt.MaxBatchTokens = 4+rng.IntN(40), 512+rng.IntN(4096)
		}
		if i%6 == 5 {
			opt.KVCapacityTokens = 20000 + int64(rng.IntN(40000))
		}
		if i%7 == 3 {
			opt.AbortDelayS = 2 + 10*rng.Float64()
		}
		if i%3 == 2 {
			opt.LatenciesOnly = true
		}
		fast, err := Evaluate(cl, reqs, opt)
		if err != nil {
			var ue *UnservableError
			if errors.As(err, &ue) {
				continue
			}
			t.Fatal(err)
		}
		_, fastRuns, _ := runLogged(t, cl, reqs, opt)
		opt.formEveryBatch = true
		slow := mustEval(t, cl, reqs, opt)
		if !sameResult(fast, slow) {
			t.Errorf("case %d (%s, %s, %+v): the shortcuts change the simulation", i, cl, cl.Policy, opt)
		}
		_, slowRuns, _ := runLogged(t, cl, reqs, opt)
		if k, ok := sameRuns(fastRuns, slowRuns); !ok {
			t.Errorf("case %d (%s, %s, %+v): run %d differs: shortcuts %q, every batch formed %q", i, cl, cl.Policy, opt, k, at(fastRuns, k), at(slowRuns, k))
		}
	}
}

// TestLazyRunsChangeNothing: lazy runs (a batch's decodes advanced at
// the machine level, through decode-only runs and mixed batching's joins
// alike; see machine.lazy) give exactly the simulation of forming every
// batch with the policy — every latency, largest gap, count and energy —
// over random designs, policies, loads and output lengths, and they do
// run in most cases.
func TestLazyRunsChangeNothing(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(13, 14))
	designs := []struct {
		name          string
		prompt, token int
	}{{"Baseline-H100", 2, 0}, {"Splitwise-HH", 3, 1}, {"Baseline-A100", 3, 0}, {"Splitwise-HA", 2, 2}, {"Splitwise-HH", 1, 1}}
	kinds := []PolicyKind{PolicyMixed, PolicyMixed, PolicyMixed, PolicySarathi, PolicyPrefillFirst, PolicyRequestLevel}
	lazy, cases, starvedCases := 0, 0, 0
	for i := 0; i < 90; i++ {
		d := designs[i%len(designs)]
		cl := mustCluster(t, d.name, d.prompt, d.token, "bloom-176b", false)
		cl.Policy = Policy{Kind: kinds[i%len(kinds)]}
		reqs := randomRequests(200+rng.IntN(300), 1+8*rng.Float64(), 1+rng.IntN(3000), 1+rng.IntN(1+rng.IntN(900)), uint64(500+i))
		opt := Options{Energy: i%2 == 0}
		switch i % 5 {
		case 2:
			opt.MaxBatchRequests, opt.MaxBatchTokens = 2+rng.IntN(30), 256+rng.IntN(4096)
		case 4:
			// A token limit that binds decode batches (a decode is one
			// token), the first prompt of a batch taken whatever its length.
			opt.MaxBatchTokens = 2 + rng.IntN(30)
		}
		if i%4 == 3 {
			opt.MaxPreemptions = 1 + rng.IntN(3)
		}
		s := againstEveryBatch(t, fmt.Sprintf("case %d (%s, %s, %+v): lazy runs", i, cl, cl.Policy, opt), cl, reqs, opt)
		if s == nil {
			continue
		}
		for j := range s.m {
			if s.m[j].decIters > 0 {
				lazy++
				break
			}
		}
		if s.lazyStarvedStarts > 0 {
			starvedCases++
		}
		cases++
	}
	if lazy < cases/2 {
		t.Errorf("lazy runs ran in %d of %d cases: the test does not exercise them", lazy, cases)
	}
	// Lazy runs with starved decodes ahead of the batch (mixed batching).
	if starvedCases < 3 {
		t.Errorf("lazy runs started with starved decodes in %d of %d cases: the test does not exercise them", starvedCases, cases)
	}
	t.Logf("%d cases, lazy runs in %d, with starved decodes in %d", cases, lazy, starvedCases)
}

// sameResult reports whether a and b are the same simulation's result:
// every field equal, the ITL sketches holding the same gaps
// (quantile.Sketch.Equal: a lazy run adds its gaps in other groupings
// than forming every batch does, which may lay the sketch's memory out
// differently).
func sameResult(a, b *Result) bool {
	if !a.ITL.Equal(&b.ITL) {
		return false
	}
	ra, rb := *a, *b
	ra.ITL, rb.ITL = quantile.Sketch{}, quantile.Sketch{}
	return reflect.DeepEqual(ra, rb)
}

// runLogged simulates cl serving reqs with opt and returns the result,
// every run started (machine, time, iterations, batch in order) and the
// simulation.
func runLogged(t *testing.T, cl Cluster, reqs []traces.Request, opt Options) (*Result, []string, *sim) {
	t.Helper()
	s, err := newSim(cl, reqs, opt)
	if err != nil {
		t.Fatal(err)
	}
	var runs []string
	s.onRun = func(m *machine, now float64) {
		runs = append(runs, fmt.Sprint(m.id, now, m.runIters, m.batch))
	}
	if err := s.run(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s.finishResult(), runs, s
}

// againstEveryBatch simulates cl serving reqs with opt, as is and forming
// every batch, and reports (as what, t.Errorf) any difference in their
// results or in any run started. It returns the simulation as is, or nil
// when the cluster cannot serve the requests.
func againstEveryBatch(t *testing.T, what string, cl Cluster, reqs []traces.Request, opt Options) *sim {
	t.Helper()
	every := opt
	every.formEveryBatch = true
	s, _ := sameSimulation(t, what, cl, reqs, opt, every)
	return s
}

// sameSimulation simulates cl serving reqs with options a and with b,
// which must give the same simulation, and reports (as what, t.Errorf)
// any difference in their results or in any run started. It returns both
// simulations, or nils when the cluster cannot serve the requests.
func sameSimulation(t *testing.T, what string, cl Cluster, reqs []traces.Request, a, b Options) (sa, sb *sim) {
	t.Helper()
	if _, err := newSim(cl, reqs, a); err != nil {
		var ue *UnservableError
		if errors.As(err, &ue) {
			return nil, nil
		}
		t.Fatal(err)
	}
	resA, runsA, sa := runLogged(t, cl, reqs, a)
	resB, runsB, sb := runLogged(t, cl, reqs, b)
	if !sameResult(resA, resB) {
		t.Errorf("%s change the simulation", what)
	}
	if k, ok := sameRuns(runsA, runsB); !ok {
		t.Errorf("%s: run %d differs: %q against %q", what, k, at(runsA, k), at(runsB, k))
	}
	return sa, sb
}

// at is runs[k], or "" past its end.
func at(runs []string, k int) string {
	if k < len(runs) {
		return runs[k]
	}
	return ""
}

// sameRuns reports the first run where two logs of runLogged differ.
func sameRuns(a, b []string) (int, bool) {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i, false
		}
	}
	return min(len(a), len(b)), len(a) == len(b)
}

// TestLazyRunsWithStarvedDecodes is TestLazyRunsChangeNothing where
// decodes starve: mixed batching on overloaded clusters (arrivals several
// times what they serve, long outputs filling the KV-cache, one to three
// left-outs to starve), where lazy runs start with starved decodes ahead
// of their batch and prompts keep arriving. Each simulation must equal
// the one that forms every batch.
func TestLazyRunsWithStarvedDecodes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 22))
	designs := []struct {
		name          string
		prompt, token int
	}{{"Baseline-H100", 1, 0}, {"Baseline-A100", 2, 0}, {"Splitwise-HH", 1, 1}, {"Splitwise-HA", 2, 1}}
	starvedCases, promptCases, cases := 0, 0, 0
	for i := 0; i < 48; i++ {
		d := designs[i%len(designs)]
		cl := mustCluster(t, d.name, d.prompt, d.token, "bloom-176b", false)
		reqs := randomRequests(150+rng.IntN(250), 4+20*rng.Float64(), 1+rng.IntN(6000), 200+rng.IntN(1500), uint64(900+i))
		opt := Options{MaxPreemptions: 1 + rng.IntN(3)}
		if i%3 == 1 {
			opt.MaxBatchRequests, opt.MaxBatchTokens = 8+rng.IntN(60), 512+rng.IntN(8192)
		}
		s := againstEveryBatch(t, fmt.Sprintf("case %d (%s, %+v): lazy runs with starved decodes", i, cl, opt), cl, reqs, opt)
		if s == nil {
			continue
		}
		if s.lazyStarvedStarts > 0 {
			starvedCases++
		}
		if s.starvedPromptJoins > 0 {
			promptCases++
		}
		cases++
	}
	if starvedCases < cases/2 {
		t.Errorf("lazy runs started with starved decodes in %d of %d cases: the test does not exercise them", starvedCases, cases)
	}
	// Joins with starved prompts (taken first, or left out again).
	if promptCases < cases/4 {
		t.Errorf("joins with starved prompts in %d of %d cases: the test does not exercise them", promptCases, cases)
	}
	t.Logf("%d cases, lazy runs with starved decodes in %d, joins with starved prompts in %d", cases, starvedCases, promptCases)
}
