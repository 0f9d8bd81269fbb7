package traces

import (
	"bytes"
	"os"
	"sort"
	"testing"
)

// TestShareGPTLikeFresh: examples/sharegpt-like.csv is what ShareGPTLike
// draws today (regenerate with go generate ./traces after changing it).
func TestShareGPTLikeFresh(t *testing.T) {
	t.Parallel()
	got, err := os.ReadFile("../examples/sharegpt-like.csv")
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := WriteSplitwise(&want, ShareGPTLike(ShareGPTRequests, ShareGPTSeed)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatal("examples/sharegpt-like.csv is stale: run go generate ./traces")
	}
}

// TestShareGPTLikeSizes: the drawn sizes have the stated medians (within
// 3%), stay in their ranges, and the same seed draws the same requests.
func TestShareGPTLikeSizes(t *testing.T) {
	t.Parallel()
	reqs := ShareGPTLike(ShareGPTRequests, ShareGPTSeed)
	var p, o []int
	for _, r := range reqs {
		if r.PromptTokens < ShareGPTPromptMin || r.PromptTokens > ShareGPTPromptMax || r.OutputTokens < ShareGPTOutputMin || r.OutputTokens > ShareGPTOutputMax {
			t.Fatalf("request %d: %d prompt, %d output tokens out of range", r.ID, r.PromptTokens, r.OutputTokens)
		}
		p, o = append(p, r.PromptTokens), append(o, r.OutputTokens)
	}
	sort.Ints(p)
	sort.Ints(o)
	for _, c := range []struct {
		name   string
		median int
		want   float64
	}{{"prompt", p[len(p)/2], ShareGPTPromptMedian}, {"output", o[len(o)/2], ShareGPTOutputMedian}} {
		if r := float64(c.median) / c.want; r < 0.97 || r > 1.03 {
			t.Errorf("%s median %d, want about %v", c.name, c.median, c.want)
		}
	}
	again := ShareGPTLike(ShareGPTRequests, ShareGPTSeed)
	for i := range reqs {
		if reqs[i] != again[i] {
			t.Fatalf("request %d differs between two draws of the same seed", i)
		}
	}
}
