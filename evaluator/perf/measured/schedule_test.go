package measured

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"splitplan/evaluator/perf/analytic"
)

var testBatchings = map[string]Batching{
	"vllm":   {TokenBudget: 8192, MaxRunning: 1024, Chunked: true, MixDecodes: true},
	"sglang": {TokenBudget: 8192, MaxRunning: 1024, Chunked: true},
	"trtllm": {TokenBudget: 8192, MaxRunning: 2048, MixDecodes: true},
}

// Tolerances of the hand-checked times: a merged step rounds its mean
// prompt tokens and context to whole tokens, up to half a token's time per
// iteration (unitTime's 1 µs per prompt token, 1 ns per context token).
const tolTTFTS, tolTPOTS = 1e-6, 1e-9

// unitTime is a toy iteration time, linear in everything: a fixed part, a
// per-token part and a per-context-token part.
func unitTime(b analytic.Batch) float64 {
	return 0.01 + 1e-6*float64(b.PromptTokens+b.Decodes) + 1e-9*float64(b.DecodeContextTokens)
}

func TestBenchLengths(t *testing.T) {
	t.Parallel()
	for _, l := range []int{1, 2, 5, 128, 1000, 1024, 8192} {
		in, out := benchLengths(5000, 7, l, l)
		lo, hi := int(0.8*float64(l)), l
		lo = max(lo, 1)
		sawLo, sawHi := false, false
		var sum float64
		for i := range in {
			for _, v := range []int{in[i], out[i]} {
				if v < lo || v > hi {
					t.Fatalf("L %d: length %d outside [%d, %d]", l, v, lo, hi)
				}
				sawLo, sawHi = sawLo || v == lo, sawHi || v == hi
				sum += float64(v)
			}
		}
		if !sawLo || !sawHi {
			t.Errorf("L %d: the range's ends were never drawn (lo %v, hi %v)", l, sawLo, sawHi)
		}
		mean := sum / float64(2*len(in))
		if want := benchMeanLength(l); math.Abs(mean-want) > 0.01*want+0.05 {
			t.Errorf("L %d: mean length %g, want about %g", l, mean, want)
		}
	}
	a1, b1 := benchLengths(100, 8, 1024, 512)
	a2, b2 := benchLengths(100, 8, 1024, 512)
	if !reflect.DeepEqual(a1, a2) || !reflect.DeepEqual(b1, b2) {
		t.Error("benchLengths is not deterministic")
	}
}

func TestScheduleDeterministic(t *testing.T) {
	t.Parallel()
	for name, b := range testBatchings {
		a, err1 := simulateSchedule(context.Background(), 37, 3000, 400, 1, b)
		c, err2 := simulateSchedule(context.Background(), 37, 3000, 400, 1, b)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !reflect.DeepEqual(a, c) {
			t.Errorf("%s: two simulations of the same row differ", name)
		}
	}
}

// TestScheduleConservation checks that every request gets its whole
// prompt and all its output tokens once, and that the weights add up to
// the measured requests.
func TestScheduleConservation(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for name, b := range testBatchings {
		for range 25 {
			c := 1 + rng.IntN(200)
			isl := 64 + rng.IntN(12000)
			osl := 2 + rng.IntN(1500)
			bb := b
			bb.MaxRunning = 1 + rng.IntN(b.MaxRunning)
			sc, err := simulateSchedule(context.Background(), c, isl, osl, 1, bb)
			if err != nil {
				t.Fatal(err)
			}
			in, out := benchLengths(benchRequestsPerClient*c, c, isl, osl)
			var wantPrompt, wantDecode int64
			tpotReqs := 0
			for i := range in {
				wantPrompt += int64(in[i])
				wantDecode += int64(out[i] - 1)
				if out[i] > 1 {
					tpotReqs++
				}
			}
			if sc.Measured != benchRequestsPerClient*c || sc.MeasuredTPOT != tpotReqs {
				t.Errorf("%s c %d: %d measured (%d for TPOT), want %d (%d)", name, c, sc.Measured, sc.MeasuredTPOT, benchRequestsPerClient*c, tpotReqs)
			}
			if sc.PromptTokens != wantPrompt || sc.DecodeTokens != wantDecode {
				t.Errorf("%s c %d isl %d osl %d: ran %d prompt tokens and %d decodes, want %d and %d", name, c, isl, osl, sc.PromptTokens, sc.DecodeTokens, wantPrompt, wantDecode)
			}
			var count, wait, dec float64
			for _, s := range sc.Steps {
				count += s.Count
				wait += s.WaitReqIters
				dec += s.DecodeWeight
			}
			if count != float64(sc.Iterations) {
				t.Errorf("%s: steps hold %g iterations, simulated %d", name, count, sc.Iterations)
			}
			// Every request waits at least its own prefill iteration.
			if wait < float64(sc.Measured) {
				t.Errorf("%s: %g request-iterations waited by %d requests", name, wait, sc.Measured)
			}
			// Each request decodes oᵢ−1 iterations of weight 1/(oᵢ−1); SGLang's
			// prefill iterations stall the decodes and add to the weight.
			if b.MixDecodes && math.Abs(dec-float64(tpotReqs)) > 1e-6*float64(tpotReqs) {
				t.Errorf("%s: decode weights add to %g, want %d", name, dec, tpotReqs)
			}
			if !b.MixDecodes && dec < float64(tpotReqs)*(1-1e-9) {
				t.Errorf("%s: decode weights add to %g, want at least %d", name, dec, tpotReqs)
			}
		}
	}
}

// TestScheduleSingleClient: one client within the budget runs its ten
// requests one after another: each request's TTFT is its prompt
// iteration and its TPOT one decode iteration at its mean context.
func TestScheduleSingleClient(t *testing.T) {
	t.Parallel()
	const isl, osl = 1000, 101
	in, out := benchLengths(benchRequestsPerClient, 1, isl, osl)
	var wantTTFT, wantTPOT float64
	for i := range in {
		wantTTFT += unitTime(analytic.Batch{PromptTokens: in[i]}) / float64(len(in))
		// contexts in[i]+1 … in[i]+out[i]−1
		meanCtx := float64(in[i]) + float64(out[i])/2
		wantTPOT += (0.01 + 1e-6 + 1e-9*meanCtx) / float64(len(in))
	}
	for name, b := range testBatchings {
		sc, err := simulateSchedule(context.Background(), 1, isl, osl, 1, b)
		if err != nil {
			t.Fatal(name, err)
		}
		ttft, tpot := sc.times(unitTime)
		if math.Abs(ttft-wantTTFT) > tolTTFTS {
			t.Errorf("%s: ttft %g, want %g", name, ttft, wantTTFT)
		}
		if math.Abs(tpot-wantTPOT) > tolTPOTS {
			t.Errorf("%s: tpot %.15g, want %.15g", name, tpot, wantTPOT)
		}
	}
}

// TestScheduleBurst checks the burst start by hand: two clients, one
// output token per request (each completes at its first token and
// releases the next), and a budget of one prompt per iteration. Iteration
// k prefills request k−1; both clients' first requests arrive at once, so
// request 0 waits one iteration and request 1 two; from then on request k
// is sent at the end of iteration k−1 and waits iterations k and k+1.
func TestScheduleBurst(t *testing.T) {
	t.Parallel()
	const isl = 1000
	b := Batching{TokenBudget: isl, MaxRunning: 16, MixDecodes: true}
	sc, err := simulateSchedule(context.Background(), 2, isl, 1, 1, b)
	if err != nil {
		t.Fatal(err)
	}
	in, _ := benchLengths(2*benchRequestsPerClient, 2, isl, 1)
	iter := func(k int) float64 { return unitTime(analytic.Batch{PromptTokens: in[k-1]}) } // k from 1
	want := iter(1)
	for k := 1; k < len(in); k++ {
		want += iter(k) + iter(k+1)
	}
	want /= float64(len(in))
	ttft, tpot := sc.times(unitTime)
	if math.Abs(ttft-want) > tolTTFTS || tpot != 0 {
		t.Errorf("burst: ttft %g, tpot %g; want %g, 0", ttft, tpot, want)
	}
	if sc.Iterations != int64(len(in)) {
		t.Errorf("burst: %d iterations, want %d", sc.Iterations, len(in))
	}
	// With room for both prompts, every iteration prefills a pair.
	b.TokenBudget = 2 * isl
	sc, err = simulateSchedule(context.Background(), 2, isl, 1, 1, b)
	if err != nil {
		t.Fatal(err)
	}
	want = 0
	for k := 0; k < len(in); k += 2 {
		want += 2 * unitTime(analytic.Batch{PromptTokens: in[k] + in[k+1]}) / float64(len(in))
	}
	if ttft, _ := sc.times(unitTime); math.Abs(ttft-want) > tolTTFTS {
		t.Errorf("burst in pairs: ttft %g, want %g", ttft, want)
	}
}

// TestScheduleDPShare: with attention DP the steps are the busiest rank's
// share; a group of d ranks and d times the clients, budget and running
// limit gives one rank's clients the same or a longer wait than one rank
// alone (the partial chunks all land on the busiest rank).
func TestScheduleDPShare(t *testing.T) {
	t.Parallel()
	b := testBatchings["vllm"]
	one, err := simulateSchedule(context.Background(), 16, 2048, 256, 1, b)
	if err != nil {
		t.Fatal(err)
	}
	g := b
	g.TokenBudget *= 4
	g.MaxRunning *= 4
	four, err := simulateSchedule(context.Background(), 64, 2048, 256, 4, g)
	if err != nil {
		t.Fatal(err)
	}
	t1, p1 := one.times(unitTime)
	t4, p4 := four.times(unitTime)
	if t4 < 0.9*t1 || p4 < 0.9*p1 {
		t.Errorf("dp 4: ttft %g, tpot %g; one rank alone %g, %g", t4, p4, t1, p1)
	}
	for _, s := range four.Steps {
		if s.Wait.Decodes > 16 || s.Decode.Decodes > 16 {
			t.Fatalf("dp 4: a rank step decodes %d/%d requests, more than its 16 clients", s.Wait.Decodes, s.Decode.Decodes)
		}
	}
}

func TestScheduleMonotone(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for name, b := range testBatchings {
		for range 30 {
			isl := 128 << rng.IntN(7)
			osl := 16 + rng.IntN(600)
			c := 1 + rng.IntN(200)
			a, err1 := simulateSchedule(context.Background(), c, isl, osl, 1, b)
			bb, err2 := simulateSchedule(context.Background(), c+1+rng.IntN(50), isl, osl, 1, b)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			_, tpA := a.times(unitTime)
			_, tpB := bb.times(unitTime)
			// 1%: iteration discretization and the lengths drawn. Only for
			// policies that mix decodes with prompts: SGLang's stalls make
			// TPOT depend on how arrivals group into prefill batches
			// (more clients can mean fewer, fuller prefill batches per
			// decode), a closed-loop effect of the schedule, not of the
			// iteration times.
			if b.MixDecodes && tpB < tpA*(1-0.01) {
				t.Errorf("%s isl %d osl %d: tpot fell from %g to %g when concurrency rose from %d", name, isl, osl, tpA, tpB, c)
			}
			longer, err := simulateSchedule(context.Background(), c, isl*2, osl, 1, b)
			if err != nil {
				t.Fatal(err)
			}
			ttA, _ := a.times(unitTime)
			ttL, _ := longer.times(unitTime)
			if ttL < ttA*(1-0.01) {
				t.Errorf("%s c %d osl %d: ttft fell from %g to %g when isl doubled from %d", name, c, osl, ttA, ttL, isl)
			}
		}
	}
}

func BenchmarkSimulateSchedule(b *testing.B) {
	for range b.N {
		if _, err := simulateSchedule(context.Background(), 256, 1024, 1024, 1, testBatchings["vllm"]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScheduleTimes(b *testing.B) {
	sc, err := simulateSchedule(context.Background(), 256, 1024, 1024, 1, testBatchings["vllm"])
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		sc.times(unitTime)
	}
	b.ReportMetric(float64(len(sc.Steps)), "steps")
}

// TestScheduleRecvInterval: SGLang's --scheduler-recv-interval N holds a
// request sent during a stretch of decodes until N decode iterations
// since the last intake: it runs the same work, and each request released
// mid-decode waits about (N−1)/2 more iterations for its first token;
// N = 1 is the plain schedule.
func TestScheduleRecvInterval(t *testing.T) {
	t.Parallel()
	b := Batching{TokenBudget: 16384, MaxRunning: 4096, Chunked: true}
	for _, c := range []int{4, 16, 64} {
		plain := mustSchedule(t, c, 1024, 1024, 1, b)
		one := b
		one.RecvInterval = 1
		same := mustSchedule(t, c, 1024, 1024, 1, one)
		if !reflect.DeepEqual(plain, same) {
			t.Errorf("%d clients: interval 1 changed the schedule", c)
		}
		for _, n := range []int{10, 30} {
			bn := b
			bn.RecvInterval = n
			sc := mustSchedule(t, c, 1024, 1024, 1, bn)
			if sc.PromptTokens != plain.PromptTokens || sc.DecodeTokens != plain.DecodeTokens {
				t.Errorf("%d clients, interval %d: ran %d prompt tokens and %d decodes, want %d and %d", c, n, sc.PromptTokens, sc.DecodeTokens, plain.PromptTokens, plain.DecodeTokens)
			}
			// Nine in ten requests are released mid-decode (the first
			// round arrives at an idle engine); an intake after a prompt
			// iteration comes at once, so the mean extra wait is at most
			// (N−1)/2 and, the releases spread over the counter's phase,
			// not far below it.
			extra := meanWait(sc) - meanWait(plain)
			t.Logf("%d clients, interval %d: +%.2f iterations", c, n, extra)
			hi := float64(n-1) / 2
			if !(extra > 0.5*0.9*hi && extra <= hi+1) {
				t.Errorf("%d clients, interval %d: requests wait %.2f more iterations, want about %.1f", c, n, extra, 0.9*hi)
			}
		}
	}
}

// TestScheduleBalance: TensorRT-LLM's attention-DP balancer holds prompts
// until every rank has one or its timeout passes, and lets them through
// at once when a rank has no decodes: the same work, the first tokens
// later by at most the timeout; no hold at one client a rank (a rank is
// always without decodes when its client's next request waits), a clear
// one at 32 clients a rank (a prompt waits for seven more), less at 256 a
// rank (prompts arrive on every rank within a few iterations); without
// attention DP it changes nothing.
func TestScheduleBalance(t *testing.T) {
	t.Parallel()
	b := Batching{TokenBudget: 2048, MaxRunning: 512, MixDecodes: true}
	bal := b
	bal.BalanceTimeout = 60
	extra := map[int]float64{}
	for _, c := range []int{8, 256, 2048} {
		plain := mustSchedule(t, c, 1024, 1024, 8, b)
		held := mustSchedule(t, c, 1024, 1024, 8, bal)
		if held.PromptTokens != plain.PromptTokens || held.DecodeTokens != plain.DecodeTokens {
			t.Errorf("%d clients: ran %d prompt tokens and %d decodes, want %d and %d", c, held.PromptTokens, held.DecodeTokens, plain.PromptTokens, plain.DecodeTokens)
		}
		extra[c] = meanWait(held) - meanWait(plain)
		t.Logf("%d clients over 8 ranks: +%.2f iterations to the first token", c, extra[c])
		// A held prompt waits at most the timeout.
		if !(extra[c] >= 0 && extra[c] <= 60) {
			t.Errorf("%d clients: requests wait %.2f more iterations, want within [0, 60]", c, extra[c])
		}
		one := mustSchedule(t, c, 1024, 1024, 1, bal)
		alone := mustSchedule(t, c, 1024, 1024, 1, b)
		if !reflect.DeepEqual(one, alone) {
			t.Errorf("%d clients: the balancer changed a schedule without attention DP", c)
		}
	}
	// The batching wait holds prompts every rank has W more iterations
	// (TensorRT-LLM's default W, 10, at 256 clients a rank, where every
	// rank soon has one), and as TensorRT-LLM's balancer does, again
	// after each release while prompts wait on every rank: the burst's
	// backlog drains at one prompt iteration in W + 1, so the mean wait
	// grows by about W, not more than 2W.
	roomy := bal
	roomy.MaxRunning = 4096       // (every client runs at once)
	roomy.TokenBudget = 8 * 20000 // (gpt-oss's 20000 tokens a rank)
	wait := roomy
	wait.BalanceBatchWait = 10
	plain := mustSchedule(t, 2048, 1024, 1024, 8, roomy)
	held := mustSchedule(t, 2048, 1024, 1024, 8, wait)
	more := meanWait(held) - meanWait(plain)
	t.Logf("batching wait 10 at 256 clients a rank: +%.2f iterations", more)
	if !(more > 5 && more <= 20) || held.PromptTokens != plain.PromptTokens || held.DecodeTokens != plain.DecodeTokens {
		t.Errorf("a batching wait of 10 iterations adds %.2f iterations to the first token (want within (5, 20]), the same work", more)
	}
	if !(extra[8] == 0 && extra[256] > 10 && extra[2048] < extra[256]/2) {
		t.Errorf("the balancer holds prompts %.2f, %.2f and %.2f more iterations at 1, 32 and 256 clients a rank: want none, a clear hold, less than half of it", extra[8], extra[256], extra[2048])
	}
}

// mustSchedule is simulateSchedule of a test's benchmark, failing the test
// on an error.
func mustSchedule(t *testing.T, clients, isl, osl, dp int, b Batching) *schedule {
	t.Helper()
	sc, err := simulateSchedule(context.Background(), clients, isl, osl, dp, b)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// meanWait returns the iterations a measured request of sc waits for its
// first token, on average.
func meanWait(sc *schedule) float64 {
	var w float64
	for _, s := range sc.Steps {
		w += s.WaitReqIters
	}
	return w / float64(sc.Measured)
}
