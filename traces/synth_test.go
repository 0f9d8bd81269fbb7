package traces

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func mustBuiltin(t testing.TB, name string) *Distribution {
	t.Helper()
	d, err := Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestBuiltin(t *testing.T) {
	t.Parallel()
	if got, want := BuiltinNames(), []string{"coding", "conversation"}; !slices.Equal(got, want) {
		t.Fatalf("BuiltinNames() = %v, want %v", got, want)
	}
	tests := []struct {
		name, want string
		requests   int
		p50, o50   float64
		source     string
	}{
		{"coding", "coding", 8819, 1469, 13, "AzureLLMInferenceTrace_code.csv"},
		{" CODING ", "coding", 8819, 1469, 13, "AzureLLMInferenceTrace_code.csv"},
		{"Conversation", "conversation", 19366, 1020, 129, "AzureLLMInferenceTrace_conv.csv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustBuiltin(t, tt.name)
			s := d.Stats()
			if d.Name() != tt.want || s.Requests != tt.requests || s.Prompt.P50 != tt.p50 || s.Output.P50 != tt.o50 {
				t.Errorf("%s: name %q stats %+v", tt.name, d.Name(), s)
			}
			if !strings.HasSuffix(d.Source(), tt.source) {
				t.Errorf("source %q, want one ending in %q", d.Source(), tt.source)
			}
			if d.Len() < 1000 || d.Len() > 2048 {
				t.Errorf("%d pairs, want 1000..2048 (a derived table, not the trace)", d.Len())
			}
		})
	}
	_, err := Builtin("chat")
	if err == nil || !strings.Contains(err.Error(), `"chat"`) || !strings.Contains(err.Error(), "coding, conversation") {
		t.Errorf("Builtin(chat) error = %v, want one naming the valid workloads", err)
	}
}

// sampledStats summarizes n sizes drawn from d.
func sampledStats(d *Distribution, n int, independent bool) Stats {
	rng := rand.New(rand.NewPCG(7, 8))
	reqs := make([]Request, n)
	for i := range reqs {
		var p, o int
		if independent {
			p, o = d.SampleIndependent(rng)
		} else {
			p, o = d.Sample(rng)
		}
		reqs[i] = Request{ID: i, Arrival: float64(i), PromptTokens: p, OutputTokens: o}
	}
	return Summarize(reqs)
}

func TestSampleReproducesTraces(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		p50, o50        float64
		pTol, oTol      float64
		pMean, oMean    float64
		meanTolRelative float64
	}{
		{"coding", 1469, 13, 25, 1, 2048, 27.9, 0.03},
		{"conversation", 1020, 129, 20, 3, 1155, 211, 0.03},
	}
	for _, tt := range tests {
		for _, independent := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/independent=%v", tt.name, independent), func(t *testing.T) {
				s := sampledStats(mustBuiltin(t, tt.name), 100_000, independent)
				if math.Abs(s.Prompt.P50-tt.p50) > tt.pTol || math.Abs(s.Output.P50-tt.o50) > tt.oTol {
					t.Errorf("sampled P50 %v / %v, want %v / %v", s.Prompt.P50, s.Output.P50, tt.p50, tt.o50)
				}
				if math.Abs(s.Prompt.Mean/tt.pMean-1) > tt.meanTolRelative || math.Abs(s.Output.Mean/tt.oMean-1) > tt.meanTolRelative {
					t.Errorf("sampled means %v / %v, want about %v / %v", s.Prompt.Mean, s.Output.Mean, tt.pMean, tt.oMean)
				}
			})
		}
	}
}

// correlation returns the Spearman-free, plain Pearson correlation of the
// logs of prompt and output sizes of n draws.
func correlation(d *Distribution, n int, independent bool) float64 {
	rng := rand.New(rand.NewPCG(3, 4))
	var sx, sy, sxx, syy, sxy float64
	for range n {
		var p, o int
		if independent {
			p, o = d.SampleIndependent(rng)
		} else {
			p, o = d.Sample(rng)
		}
		x, y := math.Log(float64(p)), math.Log(float64(o))
		sx, sy, sxx, syy, sxy = sx+x, sy+y, sxx+x*x, syy+y*y, sxy+x*y
	}
	m := float64(n)
	return (sxy/m - sx/m*sy/m) / math.Sqrt((sxx/m-sx/m*sx/m)*(syy/m-sy/m*sy/m))
}

// TestSampleKeepsPairs checks that joint sampling keeps the trace's
// correlation of prompt and output sizes, which independent sampling loses.
func TestSampleKeepsPairs(t *testing.T) {
	t.Parallel()
	reqs, err := ReadFile(realTrace(t, "AzureLLMInferenceTrace_conv.csv"))
	if err != nil {
		t.Fatal(err)
	}
	trace := correlation(FromRequests("conv", reqs), 100_000, false)
	joint := correlation(mustBuiltin(t, "conversation"), 100_000, false)
	indep := correlation(mustBuiltin(t, "conversation"), 100_000, true)
	t.Logf("log-size correlation: trace %.3f, embedded joint %.3f, independent %.3f", trace, joint, indep)
	if math.Abs(joint-trace) > 0.05 || math.Abs(indep) > 0.02 {
		t.Errorf("correlation: trace %.3f, embedded joint %.3f, independent %.3f", trace, joint, indep)
	}
}

func TestFromRequests(t *testing.T) {
	t.Parallel()
	reqs := []Request{{0, 0, 10, 1}, {1, 1, 20, 2}, {2, 3, 30, 3}}
	d := FromRequests("mine", reqs)
	if d.Name() != "mine" || d.Len() != 3 || d.Stats() != Summarize(reqs) {
		t.Fatalf("FromRequests: name %q len %d stats %+v", d.Name(), d.Len(), d.Stats())
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for range 100 {
		p, o := d.Sample(rng)
		if p != 10*o {
			t.Fatalf("Sample split a pair: (%d, %d)", p, o)
		}
		p, o = d.SampleIndependent(rng)
		if p < 10 || p > 30 || o < 1 || o > 3 {
			t.Fatalf("SampleIndependent out of range: (%d, %d)", p, o)
		}
	}
}

func TestSynthesizePoissonCount(t *testing.T) {
	t.Parallel()
	d := mustBuiltin(t, "coding")
	const rps, dur = 70.0, 120.0
	mean := rps * dur
	sigma := math.Sqrt(mean)
	for seed := range uint64(10) {
		reqs, err := Synthesize(d, rps, dur, seed, false)
		if err != nil {
			t.Fatal(err)
		}
		if n := float64(len(reqs)); math.Abs(n-mean) > 3*sigma {
			t.Errorf("seed %d: %v requests, want %v ± %.0f", seed, n, mean, 3*sigma)
		}
		for i, r := range reqs {
			if r.ID != i || r.Arrival <= 0 || r.Arrival >= dur || (i > 0 && r.Arrival < reqs[i-1].Arrival) ||
				r.PromptTokens < 1 || r.OutputTokens < 1 {
				t.Fatalf("seed %d: bad request %d: %+v", seed, i, r)
			}
		}
	}
}

func TestSynthesizeDeterministic(t *testing.T) {
	t.Parallel()
	d := mustBuiltin(t, "conversation")
	for _, independent := range []bool{false, true} {
		a, _ := Synthesize(d, 10, 60, 42, independent)
		b, _ := Synthesize(d, 10, 60, 42, independent)
		c, _ := Synthesize(d, 10, 60, 43, independent)
		if !slices.Equal(a, b) {
			t.Errorf("independent=%v: same seed, different requests", independent)
		}
		if slices.Equal(a, c) {
			t.Errorf("independent=%v: different seeds, same requests", independent)
		}
	}
}

func TestSynthesizeErrors(t *testing.T) {
	t.Parallel()
	d := mustBuiltin(t, "coding")
	tests := []struct {
		name     string
		d        *Distribution
		rps, dur float64
		want     string
	}{
		{"nil distribution", nil, 1, 1, "no requests"},
		{"empty distribution", FromRequests("none", nil), 1, 1, "no requests"},
		{"zero rate", d, 0, 1, "rate"},
		{"negative rate", d, -1, 1, "rate"},
		{"NaN rate", d, math.NaN(), 1, "rate"},
		{"infinite rate", d, math.Inf(1), 1, "rate"},
		{"zero duration", d, 1, 0, "duration"},
		{"NaN duration", d, 1, math.NaN(), "duration"},
		{"infinite duration", d, 1, math.Inf(1), "duration"},
		{"too many", d, 1e6, 1e6, "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Synthesize(tt.d, tt.rps, tt.dur, 1, false)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func BenchmarkSynthesize(b *testing.B) {
	d := mustBuiltin(b, "coding")
	for _, independent := range []bool{false, true} {
		b.Run(fmt.Sprintf("70rps_120s_independent=%v", independent), func(b *testing.B) {
			n := 0
			for b.Loop() {
				reqs, err := Synthesize(d, 70, 120, 1, independent)
				if err != nil {
					b.Fatal(err)
				}
				n += len(reqs)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "requests/s")
		})
	}
}
