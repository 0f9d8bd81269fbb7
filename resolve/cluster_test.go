package resolve

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/evaluator/perf"
	"splitplan/memory"
)

// TestSim: the simulator's cluster is the resolved cluster's machines as
// simulated (a node serving several replicas as its replicas), with each
// type's name, KV-cache capacity (the memory model's, or with compat the
// reference's rule), models and provenance, the links between the types
// (costpower.LinkBetween, the slower end winning) and the compat the
// sizes were resolved with.
func TestSim(t *testing.T) {
	t.Parallel()
	cat := costpower.Default()
	for _, compat := range []bool{false, true} {
		src := DefaultSource().WithCompat(compat)
		cl, err := NamedCluster(cat, src, "Splitwise-HA", 3, 2, "bloom-176b")
		if err != nil {
			t.Fatal(err)
		}
		s := cl.Sim()
		if s.Name != "Splitwise-HA" || s.Baseline || s.Prompt != 3 || s.Token != 2 || s.Compat != compat || s.String() != "Splitwise-HA 3P/2T" {
			t.Errorf("compat %v: %s: name, kind, counts or compat wrong: %+v", compat, s, s)
		}
		wantKV, wantCap := cl.Model.KVBytesPerToken(), cl.Model.KVCapacityBytes
		if compat {
			wantKV, wantCap = cl.Model.ReferenceKVBytesPerToken(), cl.Model.ReferenceKVCapacityBytes
		}
		if want := wantKV; s.KVBytesPerToken != want {
			t.Errorf("compat %v: %d KV bytes a token, want %d", compat, s.KVBytesPerToken, want)
		}
		types := [2]costpower.Machine{cl.PromptType, cl.TokenType}
		for i, side := range [2]struct {
			name string
			got  evaluator.MachineType
			want Cluster // the resolved type's models, on the prompt side
		}{{"prompt", s.PromptType, cl}, {"token", s.TokenType, Cluster{PromptPerf: cl.TokenPerf, PromptProvenance: cl.TokenProvenance, PromptPower: cl.TokenPower}}} {
			got, w := side.got, side.want
			if got.Name != types[i].Name || got.Unfit != nil || got.KVCapacityBytes != wantCap(types[i]) ||
				!reflect.DeepEqual(got.Perf, w.PromptPerf) || got.Provenance != w.PromptProvenance || got.Power != w.PromptPower {
				t.Errorf("compat %v: the %s type %+v does not match the resolved cluster's", compat, side.name, got)
			}
			for j := range types {
				bw, lw := costpower.LinkBetween(types[i], types[j])
				if l := s.Links[i][j]; l.BytesPerS != bw || l.LayerwiseS != lw {
					t.Errorf("compat %v: link %d→%d %+v, want %v B/s, %v s", compat, i, j, l, bw, lw)
				}
			}
		}
	}
	// The H100-A100 link is the A100's: the slower end wins.
	cl, err := NamedCluster(cat, DefaultSource(), "Splitwise-HA", 1, 1, "bloom-176b")
	if err != nil {
		t.Fatal(err)
	}
	if s := cl.Sim(); s.Links[0][1] != s.Links[1][1] || s.Links[0][1] == s.Links[0][0] {
		t.Errorf("links %+v: the H100→A100 link should be the A100's, not the H100's", s.Links)
	}
}

// TestSimReplicas: a node serving several model replicas is simulated as
// its replicas, each a type of its own ("… instance") with the replica's
// share of the link.
func TestSimReplicas(t *testing.T) {
	t.Parallel()
	cat := costpower.Default()
	d, err := cat.ResolveDesign("Baseline-H100-tp2")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := NewCluster(cat, DefaultSource(), d, 3, 0, "llama3.1-8b")
	if err != nil {
		t.Fatal(err)
	}
	k := cl.PromptType.InstancesPerMachine()
	if k < 2 {
		t.Fatalf("%s serves %d replicas a node, want several", d.Name, k)
	}
	s := cl.Sim()
	inst := cl.PromptType.Instance()
	if !s.Baseline || s.Prompt != 3*k || s.Token != 0 || s.PromptType.Name != inst.Name || !strings.HasSuffix(inst.Name, " instance") {
		t.Errorf("%s ×3: simulated as %s of %q, want %d of %q", d.Name, s, s.PromptType.Name, 3*k, inst.Name)
	}
	if bw, _ := costpower.LinkBetween(inst, inst); s.Links[0][0].BytesPerS != bw {
		t.Errorf("a replica's link %v B/s, want its share %v", s.Links[0][0].BytesPerS, bw)
	}
	if want := cl.Model.KVCapacityBytes(inst); s.PromptType.KVCapacityBytes != want {
		t.Errorf("a replica holds %d KV bytes, want %d", s.PromptType.KVCapacityBytes, want)
	}
}

// TestSimUnfit: a machine type that cannot hold the model says why: the
// memory model's sizes (a *memory.WeightsDoNotFitError), or with compat
// the reference's rule.
func TestSimUnfit(t *testing.T) {
	t.Parallel()
	cat := costpower.Default()
	for i := range cat.Models {
		if cat.Models[i].Name == "bloom-176b" {
			cat.Models[i].WeightBytes = 1 << 50
		}
	}
	for _, compat := range []bool{false, true} {
		cl, err := NamedCluster(cat, DefaultSource().WithCompat(compat), "Baseline-H100", 1, 0, "bloom-176b")
		if err != nil {
			t.Fatal(err)
		}
		u := cl.Sim().PromptType.Unfit
		var wf *memory.WeightsDoNotFitError
		switch {
		case u == nil:
			t.Errorf("compat %v: a 1 PiB model fits a DGX-H100", compat)
		case !compat && (!errors.As(u, &wf) || !strings.HasPrefix(u.Error(), "machine type DGX-H100: ")):
			t.Errorf("compat off: %v, want the memory model's sizes", u)
		case compat && !strings.Contains(u.Error(), "does not fit in a DGX-H100"):
			t.Errorf("compat: %v, want the reference's rule", u)
		}
	}
}

func TestSplitDesignPolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, design string
		policy     evaluator.PolicyKind
		err        string
	}{
		{"Baseline-H100", "Baseline-H100", evaluator.PolicyMixed, ""},
		{"HH", "HH", evaluator.PolicyMixed, ""},
		{"Baseline-H100+sarathi", "Baseline-H100", evaluator.PolicySarathi, ""},
		{" Baseline-A100 + vLLM ", "Baseline-A100", evaluator.PolicyPrefillFirst, ""},
		{"Splitwise-HH+request-level", "Splitwise-HH", evaluator.PolicyRequestLevel, ""},
		{"Baseline-H100+mixed", "Baseline-H100", evaluator.PolicyMixed, ""},
		{"Baseline-H100+magic", "", 0, `design "Baseline-H100+magic": unknown batching policy "magic" (valid: mixed, request-level, prefill-first, sarathi)`},
		{"Baseline-H100+", "", 0, "expected a batching policy after"},
		{"+sarathi", "", 0, "expected a design name before"},
	} {
		d, p, _, err := SplitDesignPolicy(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("SplitDesignPolicy(%q) error %v, want it to say %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || d != tc.design || p.Kind != tc.policy {
			t.Errorf("SplitDesignPolicy(%q) = %q, %v, %v; want %q, %v", tc.in, d, p, err, tc.design, tc.policy)
		}
	}
}

// TestNewClusterTakesTheValue: NewCluster resolves the design value it is
// given, not a catalog entry of the same name: a design the catalog does
// not list is resolved (its machine types it does), and a listed one
// renamed keeps its own pools.
func TestNewClusterTakesTheValue(t *testing.T) {
	t.Parallel()
	cat := costpower.Default()
	hh, err := cat.Design("Splitwise-HH")
	if err != nil {
		t.Fatal(err)
	}
	unlisted := hh
	unlisted.Name, unlisted.Aliases = "Unlisted-HH", nil
	renamed := hh
	renamed.Name, renamed.Aliases, renamed.Token = "Splitwise-HA", nil, "DGX-H100cap"
	for _, d := range []costpower.Design{unlisted, renamed} {
		cl, err := NewCluster(cat, DefaultSource(), d, 2, 1, "bloom-176b")
		if err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		if cl.Design.Name != d.Name || cl.PromptType.Name != d.Prompt || cl.TokenType.Name != d.Token || cl.Sim().Name != d.Name {
			t.Errorf("%s: resolved as %s with %s and %s, want %s and %s", d.Name, cl.Sim().Name, cl.PromptType.Name, cl.TokenType.Name, d.Prompt, d.Token)
		}
	}
}

// TestNewClusterBoundsPools: a cluster to simulate with a pool of more
// than costpower.MaxPoolMachines is refused with the counts (the
// simulator would allocate it whole: a makeslice panic or out of memory).
func TestNewClusterBoundsPools(t *testing.T) {
	cat := costpower.Default()
	for _, tc := range []struct {
		design        string
		prompt, token int
	}{
		{"Splitwise-HH", costpower.MaxPoolMachines + 1, 1},
		{"Splitwise-HH", 1, costpower.MaxPoolMachines + 1},
		{"Splitwise-HH", math.MaxInt, 1},
		{"Baseline-H100", math.MaxInt, 0},
	} {
		d, err := cat.Design(tc.design)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewCluster(cat, DefaultSource(), d, tc.prompt, tc.token, "bloom-176b"); err == nil || !strings.Contains(err.Error(), "at most 10000 machines a pool") {
			t.Errorf("%s %d/%d: %v", tc.design, tc.prompt, tc.token, err)
		}
	}
	d, _ := cat.Design("Splitwise-HH")
	if _, err := NewCluster(cat, DefaultSource(), d, costpower.MaxPoolMachines, 1, "bloom-176b"); err != nil {
		t.Errorf("%d/1: %v", costpower.MaxPoolMachines, err)
	}
}

// TestClusterUnfit: Cluster.Unfit names the machine type that cannot hold
// the model, whichever performance model prices it (a profiled pair's
// memory is the same memory model's): its weights, or a cache too small
// for one token of KV, with the sizes; nil when both pools hold it.
func TestClusterUnfit(t *testing.T) {
	t.Parallel()
	with := func(f func(m *costpower.Model)) *costpower.Catalog {
		cat := costpower.Default()
		for i := range cat.Models {
			if cat.Models[i].Name == "llama2-70b" {
				f(&cat.Models[i])
			}
		}
		return cat
	}
	for _, tc := range []struct {
		name   string
		cat    *costpower.Catalog
		compat bool
		want   string // "" when it fits
	}{
		{"fits", costpower.Default(), false, ""},
		{"weights", with(func(m *costpower.Model) { m.WeightBytes = 700e9 }), false,
			"machine type DGX-H100: llama2-70b does not fit on H100·tp8: its weights need 81.5 GiB per GPU"},
		{"kv", with(func(m *costpower.Model) { m.KVBytes = 9e12 }), false,
			"machine type DGX-H100: llama2-70b holds no token of KV cache on H100·tp8: one token takes 1047.7 GiB per GPU, and 54.3 GiB per GPU is left after its weights (16.1 GiB)"},
		{"compat", with(func(m *costpower.Model) { m.WeightBytes = 700e9 }), true,
			"llama2-70b (700000000000 bytes of weights) does not fit in a DGX-H100"},
	} {
		cl, err := NamedCluster(tc.cat, DefaultSource().WithCompat(tc.compat), "Splitwise-HH", 2, 2, "llama2-70b")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if cl.PromptProvenance.Kind != perf.Profiled {
			t.Fatalf("%s: %s, want the profiled pair (the path the analytic resolver's own check does not cover)", tc.name, cl.PromptProvenance)
		}
		u := cl.Unfit()
		switch {
		case tc.want == "" && u != nil:
			t.Errorf("%s: %v, want it to fit", tc.name, u)
		case tc.want != "" && (u == nil || !strings.Contains(u.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, u, tc.want)
		case tc.want != "" && cl.Sim().PromptType.Unfit.Error() != u.Error():
			t.Errorf("%s: the simulator's reason %q is not Unfit's %q", tc.name, cl.Sim().PromptType.Unfit, u)
		}
	}
}
