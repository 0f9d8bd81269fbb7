package perf

import (
	"os"
	"reflect"
	"testing"
)

// TestBuiltinPairsMatchTOML: the generated Go values are builtin.toml's
// pairs exactly, as DecodePairs reads them.
func TestBuiltinPairsMatchTOML(t *testing.T) {
	t.Parallel()
	f, err := os.Open("builtin.toml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pairs, err := DecodePairs(f, "builtin.toml")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pairs, builtinPairs) {
		t.Error("builtin_pairs.go differs from builtin.toml; run go generate ./evaluator/perf/")
	}
}

// TestBuiltinIsCurrent checks that the embedded table equals a fresh fit of
// the shared profile, so builtin.toml cannot go stale (run go generate).
func TestBuiltinIsCurrent(t *testing.T) {
	t.Parallel()
	pairs, err := Fit(realRows(t), DefaultMixedPenalty)
	if err != nil {
		t.Fatal(err)
	}
	if got := Builtin().Pairs; !reflect.DeepEqual(got, pairs) {
		t.Error("embedded builtin.toml differs from a fresh fit of " + sharedProfile + "; run go generate ./evaluator/perf/")
	}
}

func TestBuiltin(t *testing.T) {
	t.Parallel()
	a := Builtin()
	if len(a.Pairs) != 12 {
		t.Fatalf("%d builtin pairs, want 12", len(a.Pairs))
	}
	for _, k := range []struct {
		model, hw string
		tp        int
	}{{"bloom-176b", "a100-80gb", 8}, {"bloom-176b", "h100-80gb-pcap", 8}, {"llama2-70b", "h100-80gb", 2}} {
		if _, err := a.Lookup(k.model, k.hw, k.tp); err != nil {
			t.Error(err)
		}
	}
	a.Pairs[0].PromptTimeS[0] = -1
	a.Pairs = a.Pairs[:1]
	if b := Builtin(); len(b.Pairs) != 12 || b.Pairs[0].PromptTimeS[0] == -1 {
		t.Error("Builtin returned a shared table")
	}
}
