package measured

import (
	"math"

	"slices"
	"splitplan/evaluator/perf/analytic"
	"strings"
	"testing"
)

// TestDisaggRecipesTable: the embedded table parses, is sorted by id,
// names only disaggregated rows of the shipped data that give their
// worker counts, and gives most of them a decode limit.
func TestDisaggRecipesTable(t *testing.T) {
	t.Parallel()
	runs, err := disaggRecipes()
	if err != nil {
		t.Fatal(err)
	}
	byID := sharedRowsByID(t)
	limited := 0
	for id, d := range runs {
		r, ok := byID[id]
		if !ok {
			t.Errorf("%s: not a row of the shipped data", id)
			continue
		}
		if r.Mode != Disagg || r.Prefill.Workers <= 0 || r.Decode.Workers <= 0 {
			t.Errorf("%s: mode %s, workers %d/%d", id, r.Mode, r.Prefill.Workers, r.Decode.Workers)
		}
		if d.DecodeMaxBatch > 0 {
			limited++
		}
		if d.DecodeMaxBatch > 0 && d.Recipe == "" {
			t.Errorf("%s: a limit without its recipe", id)
		}
	}
	if len(runs) < 200 || limited < 150 {
		t.Errorf("%d runs, %d with a decode limit", len(runs), limited)
	}
	lines := strings.Split(strings.TrimSpace(string(disaggRecipesCSV)), "\n")[1:]
	ids := make([]string, len(lines))
	for i, l := range lines {
		ids[i], _, _ = strings.Cut(l, ",")
	}
	if !slices.IsSorted(ids) {
		t.Error("disagg_recipes.csv is not sorted by id")
	}
}

// TestParseDisaggRecipes: a table with another header, an empty or
// repeated id, a limit that is not a positive integer or an unknown
// spec_decoding is refused, naming the line.
func TestParseDisaggRecipes(t *testing.T) {
	t.Parallel()
	h := "id,decode_max_batch,prefill_max_batch,prefill_max_tokens,spec_decoding,recipe\n"
	for _, tc := range []struct{ in, want string }{
		{"id,decode\n", "expected the header"},
		{h + ",8,,,,r\n", "line 2: empty id"},
		{h + "a,8,,,,r\na,8,,,,r\n", "line 3: id a listed twice"},
		{h + "a,0,,,,r\n", "line 2: decode_max_batch \"0\" is not a positive integer"},
		{h + "a,8,x,,,r\n", "line 2: prefill_max_batch \"x\""},
		{h + "a,8,,,eagle,r\n", "line 2: spec_decoding \"eagle\""},
		{h + "a,8\n", "wrong number of fields"},
	} {
		if _, err := parseDisaggRecipes([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
	m, err := parseDisaggRecipes([]byte(h + "a,8,16,16384,,r1 r2\nb,,,,mtp,\n"))
	want := disaggRecipe{DecodeMaxBatch: 8, PrefillMaxBatch: 16, PrefillMaxTokens: 16384, Recipe: "r1 r2"}
	if err != nil || m["a"] != want || m["b"] != (disaggRecipe{Spec: "mtp"}) {
		t.Errorf("got %v, %v", m, err)
	}
}

// TestDisaggRecipeLimits: TensorRT-LLM's decode limit is per rank and
// SGLang's a worker's; the prefill batch is TensorRT-LLM's token budget
// over the prompt, at most its batch limit, and none for SGLang.
func TestDisaggRecipeLimits(t *testing.T) {
	t.Parallel()
	d := disaggRecipe{DecodeMaxBatch: 512, PrefillMaxBatch: 16, PrefillMaxTokens: 16384}
	trt, sgl := Row{Engine: TRTLLM, Mode: Disagg}, Row{Engine: SGLang, Mode: Disagg}
	if got := d.decodeSlots(trt, 8); got != 512 {
		t.Errorf("TensorRT-LLM: %g slots a rank", got)
	}
	if got := d.decodeSlots(sgl, 8); got != 64 {
		t.Errorf("SGLang: %g slots a rank", got)
	}
	for _, tc := range []struct {
		isl  float64
		want int
	}{{921.6, 16}, {7372.8, 2}, {20000, 1}} {
		if got := d.prefillBatch(trt, tc.isl); got != tc.want {
			t.Errorf("prompts of %g tokens: %d a batch, want %d", tc.isl, got, tc.want)
		}
	}
	if got := d.prefillBatch(sgl, 921.6); got != 0 {
		t.Errorf("SGLang: prefill batch %d", got)
	}
	d.Recipe = "r.yaml"
	if got, want := d.flags(trt), "decode max_batch_size 512; prefill max_num_tokens 16384, max_batch_size 16 (srt-slurm r.yaml)"; got != want {
		t.Errorf("TensorRT-LLM flags %q, want %q", got, want)
	}
	if got, want := d.flags(sgl), "decode max-running-requests 512 (srt-slurm r.yaml)"; got != want {
		t.Errorf("SGLang flags %q, want %q", got, want)
	}
	if got := (disaggRecipe{Spec: "mtp"}).flags(trt); got != "" {
		t.Errorf("no limits: flags %q", got)
	}
}

// TestBatchedWait: with one prompt a batch it is the M/D/1 wait; it is
// never negative nor above the M/D/1 wait, and grows with the arrival
// rate; past what one prompt at a time keeps up with it stays finite.
func TestBatchedWait(t *testing.T) {
	t.Parallel()
	s := func(b int) float64 { return 0.04 + 0.01*float64(b) } // a fixed cost and a cost a prompt
	s1 := s(1)
	prev := 0.0
	for lr := 0.5; lr < 200; lr *= 1.3 {
		md1 := math.Inf(1)
		if rho := lr * s1; rho < 1 {
			md1 = rho / (2 * (1 - rho)) * s1
			if got := batchedWait(lr, 1, s1, s); math.Abs(got-md1) > 1e-12 {
				t.Errorf("lr %g, k 1: %g, want the M/D/1 wait %g", lr, got, md1)
			}
		}
		w := batchedWait(lr, 16, s1, s)
		if w < 0 || w > md1 || math.IsInf(w, 0) || math.IsNaN(w) {
			t.Errorf("lr %g: wait %g (M/D/1 %g)", lr, w, md1)
		}
		if w < prev-1e-12 {
			t.Errorf("lr %g: wait %g below %g at a lower rate", lr, w, prev)
		}
		prev = w
	}
}

// TestDisaggDecodeSlots: the GB200's DeepSeek-R1 fp8 run at 27 clients on
// three decode workers of 8 slots (its recipe's max_batch_size) waits for
// a slot: predicted within a quarter of its measured 1.56 s TTFT, where
// the same run without the limit is predicted under 0.3 s. For every
// shipped run with a decode limit: with no more clients than slots the
// limit changes nothing; with more, the TPOT is at most that of full
// slots and the TTFT at least the wait for a slot, (clients / slots − 1)
// × a request's decode; and more slots never lengthen the TTFT.
func TestDisaggDecodeSlots(t *testing.T) {
	t.Parallel()
	cal := Default()
	rows := sharedRowsByID(t)
	r, ok := rows["dsr1_gb200_trtllm_fp8_disagg_1024x1024_c27_cfg386"]
	if !ok {
		t.Fatal("the GB200's 27-client run is not in the shipped data")
	}
	p, err := newRowPredictor(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	if p.decodeSlots != 8 {
		t.Fatalf("decode slots %g, want the recipe's 8", p.decodeSlots)
	}
	pred := p.prediction(cal)
	if math.Abs(pred.TTFTms/p.row.TTFTms-1) > 0.25 {
		t.Errorf("TTFT %.0f ms, measured %.0f", pred.TTFTms, p.row.TTFTms)
	}
	p.decodeSlots = 0
	if free := p.prediction(cal); free.TTFTms > 300 {
		t.Errorf("without the limit: TTFT %.0f ms", free.TTFTms)
	}

	runs, err := disaggRecipes()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for id, d := range runs {
		r, ok := rows[id]
		if !ok || d.DecodeMaxBatch == 0 {
			continue
		}
		p, err := newRowPredictor(t.Context(), r)
		if err != nil {
			continue
		}
		e, _ := cal.LookupEntry(r.GPU, r.Engine)
		m, err := p.model.model(e.Efficiency)
		if err != nil {
			t.Fatal(err)
		}
		slots := p.decodeSlots
		limited := p.prediction(cal)
		p.decodeSlots = 0
		free := p.prediction(cal)
		ranks := float64(p.decWorkers * p.model.w.DP)
		c := float64(r.Concurrency)
		switch {
		case c <= ranks*slots:
			if limited != free {
				t.Errorf("%s: %d clients within %g slots: %+v, without the limit %+v", r.ID, r.Concurrency, ranks*slots, limited, free)
			}
		default:
			isl, osl := benchMeanLength(r.InputTokens), benchMeanLength(r.OutputTokens)
			b := analytic.Batch{Decodes: int(slots), DecodeContextTokens: int64(slots * (isl + osl/2))}
			tpot := m.BatchTime(b)
			if limited.TPOTms > tpot*1e3*(1+1e-9) {
				t.Errorf("%s: TPOT %g ms, above %g at %g a rank", r.ID, limited.TPOTms, tpot*1e3, slots)
			}
			dec := (osl - 1) * limited.TPOTms / 1e3
			if wait := (c/(ranks*slots) - 1) * dec; limited.TTFTms < wait*1e3*(1-1e-9) {
				t.Errorf("%s: TTFT %g ms below the wait for a slot %g", r.ID, limited.TTFTms, wait*1e3)
			}
		}
		p.decodeSlots = 2 * slots
		if more := p.prediction(cal); more.TTFTms > limited.TTFTms*(1+1e-9) {
			t.Errorf("%s: TTFT %g ms with %g slots a rank, %g with %g", r.ID, more.TTFTms, 2*slots, limited.TTFTms, slots)
		}
		checked++
	}
	if checked < 100 {
		t.Errorf("%d runs checked", checked)
	}
}
