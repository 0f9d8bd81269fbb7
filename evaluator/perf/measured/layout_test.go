package measured

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"splitplan/hw"
)

// TestRowBatchSizeIsPerRank checks the reading of batch_size: with
// attention DP it is the clients of one rank, the system's concurrency
// being batch_size × attention_dp_size (silicon_concurrency agrees), but
// for layouts whose attention DP degree is re-read from moe_tp_size.
func TestRowBatchSizeIsPerRank(t *testing.T) {
	t.Parallel()
	rows := sharedRows(t)
	n := 0
	for _, r := range rows {
		if r.Mode != Agg || r.Agg.AttentionDP <= 1 || !strings.Contains(r.Source, "db-dump") {
			continue
		}
		n++
		if r.BatchSize == 0 {
			// A layout re-read from moe_tp_size (Parallel.attentionDP):
			// the clients split over the degree read.
			if dp := r.Agg.AttentionDP; r.RankClients() != (r.Concurrency+dp-1)/dp || r.Agg.MoETP*r.Agg.MoEEP != dp*max(r.Agg.TP, 1) {
				t.Errorf("%s: re-read layout %+v, %d clients a rank of %d", r.ID, r.Agg, r.RankClients(), r.Concurrency)
			}
			continue
		}
		if r.RankClients() != r.BatchSize {
			t.Errorf("%s: RankClients %d, batch_size %d", r.ID, r.RankClients(), r.BatchSize)
		}
		if r.Concurrency != r.BatchSize*r.Agg.AttentionDP && r.Agg.AttentionDP*r.Agg.TP <= 8 {
			t.Errorf("%s: concurrency %d, batch_size %d × dp %d", r.ID, r.Concurrency, r.BatchSize, r.Agg.AttentionDP)
		}
	}
	if n < 30 {
		// 33 once vLLM's tp4_ep4 runs written tp 4 × attention DP 4 (and
		// their tp2_ep2 copies) are read as the single-rank runs they are
		// (Parallel.productTP).
		t.Errorf("only %d attention-DP rows", n)
	}
	r := Row{Mode: Agg, Concurrency: 10, Agg: Parallel{AttentionDP: 4}}
	if got := r.RankClients(); got != 3 {
		t.Errorf("RankClients without batch_size: %d, want ⌈10/4⌉ = 3", got)
	}
}

func TestCheckLayout(t *testing.T) {
	t.Parallel()
	b200, _ := hw.Lookup("b200_sxm")
	gb200, _ := hw.Lookup("gb200")
	cases := []struct {
		p  Parallel
		g  hw.GPU
		ok bool
	}{
		{Parallel{TP: 8}, b200, true},
		{Parallel{TP: 2, AttentionDP: 4, MoEEP: 8}, b200, true},
		{Parallel{TP: 64, MoETP: 8, MoEEP: 8}, b200, false},
		{Parallel{TP: 1, AttentionDP: 16, MoETP: 4, MoEEP: 4}, b200, false},
		{Parallel{TP: 8}, gb200, true},
		{Parallel{TP: 12, MoETP: 12}, gb200, false},
		{Parallel{TP: 4, PP: 2}, b200, false},
	}
	for _, c := range cases {
		if err := checkLayout(c.p, c.g); (err == nil) != c.ok {
			t.Errorf("checkLayout(%+v, %s) = %v, want ok %v", c.p, c.g.Name, err, c.ok)
		}
	}
}

// TestPredictKVCapacity: a request whose context cannot fit in the KV
// cache is unpredictable, and a concurrency the cache cannot hold queues
// (TTFT grows faster than the clients).
func TestPredictKVCapacity(t *testing.T) {
	t.Parallel()
	r := sanityRow
	r.Model, r.GPU, r.Agg, r.GEMMQuant = "meta-llama/Llama-3.1-70B", "h100_sxm", Parallel{TP: 1}, "fp8"
	r.InputTokens, r.OutputTokens = 1<<20, 16
	if _, err := Predict(r, Default()); !errors.Is(err, ErrUnpredictable) || !strings.Contains(err.Error(), "KV cache") {
		t.Errorf("a 1M-token prompt on one H100: error %v", err)
	}
	r = sanityRow
	r.InputTokens, r.OutputTokens = 8192, 256
	var prev float64
	for _, c := range []int{16, 64, 256} {
		r.Concurrency, r.BatchSize = c, c
		p, err := Predict(r, Default())
		if err != nil {
			t.Fatal(err)
		}
		if p.TTFTms < prev {
			t.Errorf("TTFT fell to %g ms at %d clients", p.TTFTms, c)
		}
		prev = p.TTFTms
	}
}

// TestValidateLeavesOutTPOTBelowFloor: a row whose measured time per
// output token beats the spec sheet's roofline of the batches its clients
// keep running is not validated (it ran fewer requests at once than its
// clients), with the reason; the same row measured at a physical TPOT is,
// and Predict, which needs no measurement, predicts both.
func TestValidateLeavesOutTPOTBelowFloor(t *testing.T) {
	t.Parallel()
	r := sanityRow
	r.Model, r.GPU, r.Agg = "openai/gpt-oss-120b", "h100_sxm", Parallel{TP: 2}
	r.InputTokens, r.OutputTokens, r.Concurrency, r.BatchSize = 1024, 1024, 512, 512
	fast, slow := r, r
	fast.TPOTms, slow.TPOTms = 2, 60
	_, preds := Validate([]Row{fast, slow}, Default())
	if !strings.Contains(preds[0].Reason, "below the spec-sheet floor") || !preds[0].Unphysical {
		t.Errorf("TPOT 2 ms at 512 clients on two H100s: reason %q, unphysical %v", preds[0].Reason, preds[0].Unphysical)
	}
	if preds[1].Reason != "" || preds[1].Unphysical || !(preds[1].TPOTms > 0) {
		t.Errorf("TPOT 60 ms at 512 clients on two H100s: %+v", preds[1])
	}
	if _, err := Predict(fast, Default()); err != nil {
		t.Errorf("Predict: %v", err)
	}
}

// TestValidateLeavesOutPromptsBeyondPrefill: a row whose clients, by the
// closed loop's own rate (clients / (TTFT + (output − 1) × TPOT)), sent
// more prompt tokens a second than its GPU prefills with nothing else to
// do (the kernel layer's one-prompt prefill, beyond PrefillAllowance) is
// not validated, with the reason: AIConfigurator's run of
// Llama-3.1-8B-FP8 on one H200 at 2,000-token prompts, 100 output tokens
// and 64 clients measured 121.73 ms TTFT and 9.74 ms TPOT, 118k prompt
// tokens a second, where the H200 prefills 2,048-token fp8 prompts in
// 36.0 ms (data/gpu-runs/h200/llama3.1-8b-fp8: 57k a second). The same
// configuration measured three times slower is validated, and Predict
// predicts both.
func TestValidateLeavesOutPromptsBeyondPrefill(t *testing.T) {
	t.Parallel()
	r := sanityRow
	r.Model, r.GPU, r.Engine, r.Agg = "nvidia/Llama-3.1-8B-Instruct-FP8", "h200_sxm", VLLM, Parallel{TP: 1}
	r.Precision, r.GEMMQuant = "fp8", "fp8"
	r.InputTokens, r.OutputTokens, r.Concurrency, r.BatchSize = 2000, 100, 64, 64
	fast, slow := r, r
	fast.TTFTms, fast.TPOTms = 121.73, 9.74
	slow.TTFTms, slow.TPOTms = 3*121.73, 3*9.74
	_, preds := Validate([]Row{fast, slow}, Default())
	if !strings.Contains(preds[0].Reason, "faster than the GPU prefills") || !preds[0].Unphysical || !preds[0].PrefillBound {
		t.Errorf("118k prompt tokens a second on one H200: reason %q, unphysical %v, prefill bound %v", preds[0].Reason, preds[0].Unphysical, preds[0].PrefillBound)
	}
	if preds[1].Reason != "" || preds[1].Unphysical || !(preds[1].TTFTms > 0) {
		t.Errorf("the same run three times slower: %+v", preds[1])
	}
	for _, row := range []Row{fast, slow} {
		if _, err := Predict(row, Default()); err != nil {
			t.Errorf("Predict: %v", err)
		}
	}
}

// TestSameRunCountedOnce: a row that repeats an earlier predicted row's
// GPU, engine and both measured means to 12 significant digits (another
// snapshot of the same run, the other DeepSeek name, the last bit
// parsed another way) is left out once, naming the row it repeats; a
// row measured differently, on another GPU, or before any row was
// predicted is not; validation's cells do not change with the copies,
// and the fit sees each run once.
func TestSameRunCountedOnce(t *testing.T) {
	t.Parallel()
	r := sanityRow
	r.Model, r.GPU, r.Agg = "deepseek-ai/DeepSeek-R1", "h200_sxm", Parallel{TP: 8}
	r.Engine, r.Precision, r.InputTokens, r.OutputTokens, r.Concurrency, r.BatchSize = SGLang, "fp8", 1024, 1024, 16, 16
	r.TTFTms, r.TPOTms, r.ID, r.Line = 412.3456789012345, 21.234567890123456, "first", 2
	copyV3, lastBit, other, otherGPU, bad := r, r, r, r, r
	copyV3.Model, copyV3.ID, copyV3.Line = "deepseek-ai/DeepSeek-V3", "v3", 3
	lastBit.TTFTms, lastBit.ID, lastBit.Line = math.Nextafter(r.TTFTms, 1e9), "lastbit", 4
	other.TPOTms, other.ID, other.Line = 21.2345679, "other", 5
	otherGPU.GPU, otherGPU.ID, otherGPU.Line = "b200_sxm", "b200", 6
	bad.Agg, bad.ID, bad.Line = Parallel{TP: 64}, "wide", 1 // unpredictable: keeps its own reason
	_, preds := Validate([]Row{bad, r, copyV3, lastBit, other, otherGPU}, Default())
	if preds[0].Duplicate || preds[0].Reason == "" || strings.Contains(preds[0].Reason, "recorded twice") {
		t.Errorf("a 64-GPU layout: %+v", preds[0])
	}
	for _, i := range []int{1, 4, 5} {
		if preds[i].Reason != "" || preds[i].Duplicate {
			t.Errorf("row %s: left out: %s", preds[i].Row.ID, preds[i].Reason)
		}
	}
	for _, i := range []int{2, 3} {
		if !preds[i].Duplicate || !strings.Contains(preds[i].Reason, "as first (line 2, deepseek-ai/DeepSeek-R1)") {
			t.Errorf("row %s: duplicate %v, reason %q", preds[i].Row.ID, preds[i].Duplicate, preds[i].Reason)
		}
	}
	// Rounded to 0.01 ms (the gap-analysis files): a rounded record
	// repeats a full one that rounds to it, and a full one a rounded
	// record before it; two full records that agree only to 0.01 ms are
	// two runs.
	full := r
	full.TTFTms, full.TPOTms, full.ID, full.Line = 412.3456789012345, 21.2345678, "full", 7
	round2 := full
	round2.TTFTms, round2.TPOTms, round2.ID, round2.Line = 412.35, 21.23, "rounded", 8
	near := full
	near.TTFTms, near.TPOTms, near.ID, near.Line = 412.3461, 21.2349, "near", 9
	_, rp := Validate([]Row{full, round2, near}, Default())
	if rp[0].Duplicate || !rp[1].Duplicate || !strings.Contains(rp[1].Reason, "to 0.01 ms") || rp[2].Duplicate {
		t.Errorf("full then rounded then near: %v / %v / %v (%s)", rp[0].Duplicate, rp[1].Duplicate, rp[2].Duplicate, rp[1].Reason)
	}
	_, rp = Validate([]Row{round2, full}, Default())
	if rp[0].Duplicate || !rp[1].Duplicate || !strings.Contains(rp[1].Reason, "as rounded (line 8") {
		t.Errorf("rounded then full: %v / %v (%s)", rp[0].Duplicate, rp[1].Duplicate, rp[1].Reason)
	}
	once, _ := Validate([]Row{r, other, otherGPU}, Default())
	twice, _ := Validate([]Row{r, copyV3, lastBit, other, otherGPU}, Default())
	if !reflect.DeepEqual(once, twice) {
		t.Errorf("cells with the copies %+v, without %+v", twice, once)
	}
	ok, bads, err := prepare(context.Background(), []Row{r, copyV3, other}, Options{})
	if err != nil || len(ok) != 2 || len(bads) != 1 || !bads[0].Duplicate {
		t.Errorf("the fit's rows: %d predicted, %+v, %v", len(ok), bads, err)
	}
}
