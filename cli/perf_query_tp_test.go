package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"splitplan/arch"
)

// TestPerfQueryRejectsUnservableShapes: a tensor parallelism that does not
// divide the attention heads or the node's GPUs, and a decode batch with
// less than a token of context per request, are bad input (exit 2) that
// names the flag; the shapes next to them are answered.
func TestPerfQueryRejectsUnservableShapes(t *testing.T) {
	base := []string{"perf", "query", "--model", "llama3.1-70b", "--hardware", "h200", "--decode-batch", "32"}
	for _, tc := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"--tp", "3"}, []string{"--tp 3", "64 attention heads"}},
		{[]string{"--tp", "16"}, []string{"--tp 16", "8 GPUs"}},
		{[]string{"--tp", "8", "--context-tokens", "31"}, []string{"--context-tokens 31", "--decode-batch 32"}},
	} {
		code, out, errs := runCLI(t, append(append([]string{}, base...), tc.args...)...)
		wantBadInput(t, code, out, errs, tc.wants...)
		// The kernel-layer answers (--breakdown, --engine none) refuse
		// the same shapes.
		for _, extra := range [][]string{{"--breakdown"}, {"--engine", "none"}} {
			code, out, errs := runCLI(t, append(append(append([]string{}, base...), tc.args...), extra...)...)
			wantBadInput(t, code, out, errs, tc.wants...)
		}
	}
	// bloom-176b's profile has no tp3 pair: the analytic fallback refuses it (112 heads).
	code, out, errs := runCLI(t, "perf", "query", "--model", "bloom-176b", "--hardware", "h100", "--tp", "3", "--prompt-tokens", "100")
	wantBadInput(t, code, out, errs, "--tp 3", "112 attention heads")
	for _, args := range [][]string{
		{"--tp", "4"},
		{"--tp", "8", "--context-tokens", "32"},
	} {
		code, out, errs := runCLI(t, append(append([]string{}, base...), args...)...)
		if code != 0 || !strings.Contains(out, "decode iteration of 32 requests") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	// Grouped-query attention with more GPUs than key/value heads replicates
	// them: qwen3-235b-a22b (64 heads, 4 KV heads) is servable at tp8.
	code, out, errs = runCLI(t, "perf", "query", "--model", "qwen3-235b-a22b", "--hardware", "h200", "--tp", "8", "--decode-batch", "4")
	if code != 0 {
		t.Errorf("qwen3-235b-a22b tp8 (KV heads replicated): exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestCheckQueryTP covers the key/value head rule, which no built-in model
// on an 8-GPU node exercises.
func TestCheckQueryTP(t *testing.T) {
	a, err := arch.Lookup("llama3.1-8b")
	if err != nil {
		t.Fatal(err)
	}
	a.Heads, a.KVHeads = 48, 6 // tp 4 divides the heads but neither splits nor replicates 6 KV heads evenly
	if err := checkQueryTP(a, 8, "test", 4); err == nil || !strings.Contains(err.Error(), "key/value heads") {
		t.Errorf("6 KV heads over 4 GPUs: %v", err)
	}
	if err := checkQueryTP(a, 8, "test", 2); err != nil {
		t.Errorf("6 KV heads over 2 GPUs: %v", err)
	}
	a.KVLoraRank = 512 // latent attention: one latent per token, replicated
	if err := checkQueryTP(a, 8, "test", 4); err != nil {
		t.Errorf("MLA at tp4: %v", err)
	}
}

// TestPerfQueryHelpNamesEveryValue: perf query --help names what each
// valued flag takes (no bare "value" placeholder).
func TestPerfQueryHelpNamesEveryValue(t *testing.T) {
	code, out, errs := runCLI(t, "perf", "query", "--help")
	if code != 0 || !strings.Contains(out, "USAGE:\n   splitplan perf query --hardware") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, " value ") && strings.HasPrefix(strings.TrimSpace(line), "--") {
			t.Errorf("flag without a named value: %q", line)
		}
	}
}

// TestPerfQueryBreakdownIsTheQuery: --breakdown prints the same iteration
// time as the plain query, for a mixture-of-experts model too (its routed
// experts in the engine's measured MoE kernel, which the breakdown names),
// under each engine.
func TestPerfQueryBreakdownIsTheQuery(t *testing.T) {
	t.Parallel()
	line := func(out string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "prompt iteration of") {
				return l
			}
		}
		return ""
	}
	for _, engine := range []string{"vllm", "sglang", "trtllm"} {
		args := []string{"perf", "query", "--hardware", "h200", "--model", "gpt-oss-120b", "--tp", "1", "--prompt-tokens", "8192", "--engine", engine}
		code, plain, stderr := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", engine, code, stderr)
		}
		code, bd, stderr := runCLI(t, append(args, "--breakdown")...)
		if code != 0 {
			t.Fatalf("%s --breakdown: exit %d: %s", engine, code, stderr)
		}
		if line(plain) == "" || line(plain) != line(bd) {
			t.Errorf("%s: plain %q, breakdown %q", engine, line(plain), line(bd))
		}
		if !strings.Contains(bd, "routed experts in MoE kernel "+engine+"-") {
			t.Errorf("%s --breakdown does not name its MoE kernel:\n%s", engine, bd)
		}
	}
}

// TestPerfQueryRefusesKVBeyondMemory: an iteration whose KV cache one
// replica cannot hold under the memory model (the simulator refuses such
// a request as unservable) is bad input naming the flag, with the
// replica's capacity, in every answer of perf query (the analytic model,
// its kernel layer and breakdown, and a profiled pair); --compat answers
// the reference's curves under its own memory rule. The same queries
// within the capacity are answered.
func TestPerfQueryRefusesKVBeyondMemory(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"--model", "llama3.1-8b", "--hardware", "h100", "--tp", "1", "--prompt-tokens", "2000000"},
			[]string{"--prompt-tokens 2000000", "455542 KV tokens per replica", "a larger --tp"}},
		{[]string{"--model", "llama3.1-8b", "--hardware", "h100", "--tp", "1", "--decode-batch", "64", "--context-tokens", "5000000"},
			[]string{"--context-tokens 5000000", "64 decoding requests", "455542 KV tokens"}},
		{[]string{"--model", "llama3.1-8b", "--hardware", "h100", "--tp", "8", "--decode-batch", "9000000"},
			[]string{"--decode-batch 9000000", "H100·tp8", "ask for fewer tokens"}},
		{[]string{"--model", "bloom-176b", "--hardware", "h100", "--tp", "8", "--prompt-tokens", "100000"},
			[]string{"--prompt-tokens 100000", "bloom-176b replica", "61911 KV tokens"}},
	} {
		code, out, errs := runCLI(t, append([]string{"perf", "query"}, tc.args...)...)
		wantBadInput(t, code, out, errs, tc.wants...)
		if tc.args[1] == "bloom-176b" {
			continue // a profiled pair: no kernel-layer answer to check
		}
		for _, extra := range [][]string{{"--breakdown"}, {"--engine", "none"}} {
			code, out, errs := runCLI(t, append(append([]string{"perf", "query"}, tc.args...), extra...)...)
			wantBadInput(t, code, out, errs, tc.wants...)
		}
	}
	for _, args := range [][]string{
		{"--model", "llama3.1-8b", "--hardware", "h100", "--tp", "1", "--prompt-tokens", "200000"},
		{"--model", "llama3.1-8b", "--hardware", "h100", "--tp", "1", "--decode-batch", "64", "--context-tokens", "455542"},
		{"--model", "bloom-176b", "--hardware", "h100", "--tp", "8", "--prompt-tokens", "60000"},
		{"--model", "bloom-176b", "--hardware", "h100", "--tp", "8", "--prompt-tokens", "100000", "--compat", "splitwise-sim"},
	} {
		code, out, errs := runCLI(t, append([]string{"perf", "query"}, args...)...)
		if code != 0 || !strings.Contains(out, "iteration of") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}

// TestPerfQueryRefusesWeightsBeyondMemory: a replica whose weights do
// not fit in what its engine may use (the one memory model: 0.9 of each
// GPU less the reserve) is bad input naming the model, GPU and tp, with
// the sizes and the tensor parallelisms that hold it, whatever answers
// the query (an engine, its breakdown or the kernel layer alone): issue
// 28's Llama-3.1-70B bf16 on one H200 (131.4 GiB of weights, 124.9 GiB
// usable, under the H200's 141 GiB) and DeepSeek-R1 fp8 on 8 H100s (no
// tp of the node holds it). The tp that fits is answered.
func TestPerfQueryRefusesWeightsBeyondMemory(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"--model", "llama3.1-70b", "--hardware", "h200", "--tp", "1", "--prompt-tokens", "100"},
			[]string{"--tp 1", "does not fit on H200·tp1", "131.4 GiB per GPU", "124.9 GiB per GPU", "ask for --tp 2 or --tp 4 or --tp 8"}},
		{[]string{"--model", "deepseek-r1", "--hardware", "h100", "--tp", "8", "--decode-batch", "8"},
			[]string{"--tp 8", "does not fit on H100·tp8", "79.1 GiB per GPU", "no tensor parallelism of this node holds them"}},
	} {
		for _, extra := range [][]string{nil, {"--breakdown"}, {"--engine", "none"}, {"--engine", "trtllm"}} {
			code, out, errs := runCLI(t, append(append([]string{"perf", "query"}, tc.args...), extra...)...)
			wantBadInput(t, code, out, errs, tc.wants...)
		}
	}
	code, out, errs := runCLI(t, "perf", "query", "--model", "llama3.1-70b", "--hardware", "h200", "--tp", "2", "--prompt-tokens", "100")
	if code != 0 || !strings.Contains(out, "iteration of") {
		t.Errorf("llama3.1-70b on h200 tp 2: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// The tensor parallelisms offered are those the heads allow too: 28
	// heads share 4 GPUs, not 8.
	cfg := filepath.Join(t.TempDir(), "h28.json")
	if err := os.WriteFile(cfg, []byte(`{"architectures":["LlamaForCausalLM"],"hidden_size":7168,"intermediate_size":28672,"num_attention_heads":28,"num_hidden_layers":64,"num_key_value_heads":4,"vocab_size":128256,"torch_dtype":"bfloat16","model_type":"llama"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "perf", "query", "--model-config", cfg, "--hardware", "l40s", "--tp", "2", "--prompt-tokens", "10")
	wantBadInput(t, code, out, errs, "does not fit on L40S·tp2", "ask for --tp 4")
	if strings.Contains(errs, "--tp 8") {
		t.Errorf("offers --tp 8 to 28 heads: %s", errs)
	}
}

// TestPerfQueryEngineChecked: an unknown --engine is refused whatever
// answers the query, and a profiled pair, which answers as it was
// measured, refuses --engine rather than ignoring it.
func TestPerfQueryEngineChecked(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.toml")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--hardware", "h100", "--prompt-tokens", "100", "--engine", "bogus"}, `engine "bogus"`},
		{[]string{"--hardware", "h200", "--model", "llama3.1-8b", "--tp", "1", "--prompt-tokens", "100", "--engine", "bogus"}, `engine "bogus"`},
		{[]string{"--hardware", "h100", "--prompt-tokens", "100", "--engine", "sglang"}, "the profiled pair bloom-176b/h100-80gb/tp8 answers as it was measured"},
		{[]string{"--hardware", "h100", "--prompt-tokens", "100", "--fitted", empty}, "no [[perf]] pair in it"},
	} {
		code, out, errs := runCLI(t, append([]string{"perf", "query"}, tc.args...)...)
		wantBadInput(t, code, out, errs, tc.want)
	}
}

// TestPerfFitRefusesOneSize: a profile whose pair measures one prompt size
// (or one decode batch) would fit a flat curve, every larger prompt as
// fast as it: perf fit refuses it, naming the file and the pair, and
// writes nothing.
func TestPerfFitRefusesOneSize(t *testing.T) {
	dir := t.TempDir()
	profile, out := filepath.Join(dir, "p.csv"), filepath.Join(dir, "fit.toml")
	const head = "model,hardware,tensor_parallel,prompt_size,batch_size,token_size,prompt_time,token_time\n"
	for body, want := range map[string]string{
		head + "bloom-176b,h100-80gb,8,512,1,128,70,40\nbloom-176b,h100-80gb,8,512,1,256,70,41\n":   "one of the prompt sizes",
		head + "bloom-176b,h100-80gb,8,512,1,128,70,40\nbloom-176b,h100-80gb,8,1024,1,128,130,41\n": "one of the decode batch sizes",
	} {
		if err := os.WriteFile(profile, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, errs := runCLI(t, "perf", "fit", "--profile", profile, "--out", out)
		wantBadInput(t, code, stdout, errs, profile, "bloom-176b/h100-80gb/tp8", want)
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: wrote %s", want, out)
		}
	}
}

// TestPerfQueryModelConfig: perf query answers a --model-config model
// with the analytic model, engine terms included, as it answers the
// built-in of the same architecture (it failed with "unknown model" but
// with --breakdown or --engine none, which read the config themselves).
func TestPerfQueryModelConfig(t *testing.T) {
	t.Parallel()
	for _, q := range [][]string{
		{"--prompt-tokens", "1024"},
		{"--decode-batch", "8", "--context-tokens", "8000", "--engine", "sglang"},
		{"--prompt-tokens", "2048", "--breakdown"},
	} {
		timeOf := func(out string) string {
			i := strings.Index(out, "iteration of")
			if i < 0 {
				return ""
			}
			line := out[i:]
			return line[:strings.Index(line, "\n")]
		}
		args := append([]string{"perf", "query", "--hardware", "h100", "--tp", "1"}, q...)
		code, cfgOut, errs := runCLI(t, append(args, "--model-config", "examples/llama-3.1-8b-config.json")...)
		if code != 0 {
			t.Fatalf("%v with --model-config: exit %d: %s", q, code, errs)
		}
		code, builtinOut, errs := runCLI(t, append(args, "--model", "llama3.1-8b")...)
		if code != 0 {
			t.Fatalf("%v with --model llama3.1-8b: exit %d: %s", q, code, errs)
		}
		if got, want := timeOf(cfgOut), timeOf(builtinOut); got == "" || got != want {
			t.Errorf("%v: --model-config %q, built-in %q", q, got, want)
		}
	}
}
