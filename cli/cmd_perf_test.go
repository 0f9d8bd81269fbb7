package cli

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"splitplan/evaluator/perf"
)

// runPerf runs `splitplan perf args...` and returns the exit status,
// stdout and stderr.
func runPerf(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runCLI(t, append([]string{"perf"}, args...)...)
}

func perfNeedProfile(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(sharedProfilePath); err != nil {
		t.Skipf("shipped profile not available: %v", err)
	}
}

func TestPerfQuery(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
		not  []string
	}{
		{"compat prompt", []string{"--hardware", "h100", "--prompt-tokens", "1000", "--compat", "splitwise-sim"},
			[]string{"bloom-176b/h100-80gb/tp8", "compat", "129.588 ms (0.129588 s)"}, []string{"extrapolated"}},
		{"compat decode of 1 on A100", []string{"--hardware", "A100-80GB", "--decode-batch", "1", "--compat", "splitwise-sim"},
			[]string{"47.518 ms", "extrapolated beyond the profiled range"}, nil},
		{"compat decode of 1 on H100", []string{"--hardware", "h100-80gb", "--decode-batch", "1", "--compat", "SPLITWISE-SIM"},
			[]string{"35.327 ms"}, nil},
		{"compat decode of 2", []string{"--hardware", "h100", "--decode-batch", "2", "--compat", "splitwise-sim", "--model", "BLOOM-176B"},
			[]string{"35.330 ms (0.0353305 s)"}, nil},
		{"default decode at base", []string{"--hardware", "a100", "--decode-batch", "8"},
			[]string{"default fit", "base context, 576 tokens per request", "52.953 ms"}, []string{"extrapolated"}},
		{"default decode long context", []string{"--hardware", "a100", "--decode-batch", "8", "--context-tokens", "40000"},
			[]string{"5000.0 per request", "65.779 ms"}, []string{"extrapolated"}},
		{"default prompt extrapolated", []string{"--hardware", "a100", "--prompt-tokens", "100"},
			[]string{"75.404 ms", "extrapolated", "from 128 to 32768"}, nil},
		{"llama tp2 power-capped", []string{"--model", "llama2-70b", "--hardware", "h100cap", "--tp", "2", "--prompt-tokens", "2048"},
			[]string{"llama2-70b/h100-80gb-pcap/tp2"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runPerf(t, append([]string{"query"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestPerfValidate(t *testing.T) {
	if testing.Short() {
		t.Skip("10 s of fits: the full suite runs it (and the perf_validate golden)")
	}
	perfNeedProfile(t)
	code, out, errs := runPerf(t, "validate")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, w := range []string{"prompt MAPE %", "token MAPE %", "bloom-176b", "h100-80gb-pcap", "250", "seed 1"} {
		if !strings.Contains(out, w) {
			t.Errorf("table lacks %q:\n%s", w, out)
		}
	}
	table, transfer, _ := strings.Cut(out, "\n\n"+"analytic model fitted")
	if lines := strings.Split(strings.TrimSpace(table), "\n"); !strings.HasPrefix(lines[len(lines)-1], "all") {
		t.Errorf("last row of the table is not the pooled one: %q", lines[len(lines)-1])
	}
	if !strings.Contains(transfer, "predicting the h100-80gb rows it never saw") {
		t.Errorf("no A100→H100 transfer line after the table:\n%s", out)
	}

	code, out, errs = runPerf(t, "validate", "--format", "csv", "--seed", "1", "--profile", sharedProfilePath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(recs[0][:5], ","); got != "model,hardware,tp,prompt_mape_pct,token_mape_pct" {
		t.Errorf("header %q", got)
	}
	if len(recs) != 14 {
		t.Fatalf("%d records, want header + 12 pairs + all", len(recs))
	}
	last := recs[len(recs)-1]
	if last[0] != "all" {
		t.Errorf("last row %v", last)
	}
	for _, r := range recs[1:] {
		for _, col := range []int{3, 4} {
			v, err := strconv.ParseFloat(r[col], 64)
			if err != nil || v <= 0 || v > 10 {
				t.Errorf("row %v: %s = %q", r, recs[0][col], r[col])
			}
		}
	}
	// Deterministic: the same seed prints the same CSV.
	_, again, _ := runPerf(t, "validate", "--format", "csv")
	if again != out {
		t.Error("validate is not deterministic")
	}
}

func TestPerfFitRoundTrip(t *testing.T) {
	perfNeedProfile(t)
	out := filepath.Join(t.TempDir(), "fitted.toml")
	code, stdout, errs := runPerf(t, "fit", "--profile", sharedProfilePath, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(stdout, "wrote 12 pairs") || !strings.Contains(stdout, "bloom-176b/a100-80gb/tp8: prompt 9 knots, decode 7") {
		t.Errorf("fit output:\n%s", stdout)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := perf.DecodePairs(f, out)
	f.Close()
	if err != nil || len(pairs) != 12 {
		t.Fatalf("decoding the fit: %d pairs, %v", len(pairs), err)
	}
	for _, q := range [][]string{
		{"--hardware", "h100", "--prompt-tokens", "1000"},
		{"--hardware", "a100", "--decode-batch", "3", "--context-tokens", "9000"},
		{"--hardware", "h100cap", "--decode-batch", "1", "--compat", "splitwise-sim"},
		{"--model", "llama2-70b", "--tp", "4", "--hardware", "a100", "--prompt-tokens", "777"},
	} {
		_, builtin, _ := runPerf(t, append([]string{"query"}, q...)...)
		code, fitted, errs := runPerf(t, append([]string{"query", "--fitted", out}, q...)...)
		if code != 0 {
			t.Fatalf("query --fitted: exit %d: %s", code, errs)
		}
		_, profiled, _ := runPerf(t, append([]string{"query", "--profile", sharedProfilePath}, q...)...)
		// The first line names the source; the answer lines must agree.
		answer := func(s string) string { _, rest, _ := strings.Cut(s, "\n"); return rest }
		if answer(builtin) != answer(fitted) || answer(builtin) != answer(profiled) {
			t.Errorf("query %v:\nbuilt-in:\n%s\nfitted:\n%s\nprofile:\n%s", q, builtin, fitted, profiled)
		}
	}
}

func TestPerfBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	header := "model,hardware,prompt_size,batch_size,token_size,peak_power,average_power,prompt_time,token_time,e2e_time,tensor_parallel\n"
	bad := write("bad.csv", header+"m,hw,512,1,128,1,1,200,50,1,8\nm,hw,512,1,128,1,1,fast,50,1,8\n")
	empty := write("empty.csv", "")
	badToml := write("bad.toml", "[[perf]]\nmodel = \"m\"\ncolour = 3\n")
	fitted := write("good.toml", "[[perf]]\nmodel = \"bloom-176b\"\nhardware = \"a100-80gb\"\ntp = 8\nmixed_penalty = 1.1\nprompt_tokens = [128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 32768.0]\nprompt_time_s = [0.0796, 0.0991, 0.1745, 0.2880, 0.5345, 1.3351, 3.5516, 5.7820, 11.2518]\ndecode_batch = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]\ndecode_time_s = [0.0487, 0.0499, 0.0510, 0.0529, 0.0573, 0.0653, 0.0965]\nbase_context_tokens = 576.0\ncontext_tokens = [192.0, 320.0, 576.0, 640.0, 768.0, 1024.0, 1088.0, 1536.0, 2112.0, 2560.0, 4160.0, 4608.0, 8256.0]\ncontext_time_s = [0.0476, 0.0477, 0.0487, 0.0490, 0.0493, 0.0505, 0.0487, 0.0500, 0.0493, 0.0503, 0.0502, 0.0503, 0.0512]\ncompat_batch_tokens = [128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 32768.0]\ncompat_prompt_time_s = [0.0796, 0.0991, 0.1743, 0.2874, 0.5360, 1.3326, 3.5914, 5.7820, 11.2518]\ncompat_token_time_s = [0.0476, 0.0477, 0.0493, 0.0494, 0.0501, 0.0516, 0.0542, 0.0653, 0.0965]\n")
	tinyFit := write("tiny.toml", "gpu = \"h100_sxm\"\nrows = 1\n[kernel]\ngemm_compute = 1e-300\ngemm_compute_fp8 = 0.6\ngemm_memory = 0.8\nblend = 0.1\ngemm_latency_s = 4e-6\nattn_compute = 0.25\nkv_memory = 0.8\nlayer_latency_s = 4e-5\niteration_s = 0\n")
	out := filepath.Join(dir, "out.toml")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"no hardware", []string{"query", "--prompt-tokens", "10"}, []string{"--hardware"}},
		{"neither", []string{"query", "--hardware", "a100"}, []string{"--prompt-tokens", "--decode-batch"}},
		{"both", []string{"query", "--hardware", "a100", "--prompt-tokens", "1", "--decode-batch", "1"}, []string{"exactly one"}},
		{"zero prompt", []string{"query", "--hardware", "a100", "--prompt-tokens", "0"}, []string{"--prompt-tokens 0", "positive"}},
		{"negative batch", []string{"query", "--hardware", "a100", "--decode-batch", "-3"}, []string{"--decode-batch -3"}},
		{"not a number", []string{"query", "--hardware", "a100", "--decode-batch", "many"}, []string{"decode-batch"}},
		{"context with prompt", []string{"query", "--hardware", "a100", "--prompt-tokens", "5", "--context-tokens", "9"}, []string{"--context-tokens"}},
		{"zero context", []string{"query", "--hardware", "a100", "--decode-batch", "5", "--context-tokens", "0"}, []string{"--context-tokens 0"}},
		{"bad compat", []string{"query", "--hardware", "a100", "--prompt-tokens", "5", "--compat", "vllm"}, []string{"--compat", "splitwise-sim"}},
		{"bad tp", []string{"query", "--hardware", "a100", "--prompt-tokens", "5", "--tp", "0"}, []string{"--tp 0"}},
		{"unknown pair", []string{"query", "--hardware", "tpu-v9", "--prompt-tokens", "5"}, []string{"tpu-v9", "available", "bloom-176b/a100-80gb/tp8"}},
		{"weights do not fit", []string{"query", "--model", "kimi-k2.5", "--hardware", "h100", "--prompt-tokens", "5"}, []string{"kimi-k2.5"}},
		{"profile and fitted", []string{"query", "--hardware", "a100", "--prompt-tokens", "5", "--profile", bad, "--fitted", badToml}, []string{"exclusive"}},
		{"malformed profile", []string{"query", "--hardware", "a100", "--prompt-tokens", "5", "--profile", bad}, []string{"bad.csv:3", "prompt_time", `"fast"`}},
		{"malformed fitted", []string{"query", "--hardware", "a100", "--prompt-tokens", "5", "--fitted", badToml}, []string{"bad.toml", "colour"}},
		{"missing fitted", []string{"query", "--hardware", "a100", "--prompt-tokens", "5", "--fitted", filepath.Join(dir, "nope.toml")}, []string{"--fitted", "nope.toml"}},
		{"kernel fraction under 1%", []string{"query", "--hardware", "h100", "--model", "llama3.1-8b", "--tp", "1", "--prompt-tokens", "2048", "--engine", "none", "--kernels-fit", tinyFit}, []string{"--kernels-fit", "tiny.toml", "gemm_compute = 1e-300: expected a fraction in [0.01, 0.81]"}},
		{"pair not in the fitted file", []string{"query", "--hardware", "tpu-v9", "--prompt-tokens", "5", "--fitted", fitted}, []string{"no performance model for bloom-176b/tpu-v9/tp8", "(the pairs of --fitted", "good.toml)"}},
		{"unknown flag", []string{"query", "--gpu", "a100"}, []string{"gpu"}},
		{"positional", []string{"query", "--hardware", "a100", "--prompt-tokens", "5", "extra"}, []string{"extra"}},
		{"validate format", []string{"validate", "--profile", bad, "--format", "json"}, []string{"--format", "table or csv"}},
		{"validate malformed", []string{"validate", "--profile", bad}, []string{"bad.csv:3"}},
		{"validate empty", []string{"validate", "--profile", empty}, []string{"empty.csv", "empty file"}},
		{"validate seed", []string{"validate", "--seed", "-1"}, []string{"seed"}},
		{"fit no profile", []string{"fit", "--out", out}, []string{"--profile"}},
		{"fit no out", []string{"fit", "--profile", bad}, []string{"--out"}},
		{"fit penalty", []string{"fit", "--profile", bad, "--out", out, "--mixed-penalty", "0"}, []string{"--mixed-penalty"}},
		{"fit malformed", []string{"fit", "--profile", bad, "--out", out}, []string{"bad.csv:3", "column 8"}},
		{"fit missing", []string{"fit", "--profile", filepath.Join(dir, "nope.csv"), "--out", out}, []string{"nope.csv"}},
		{"fit unwritable", []string{"fit", "--profile", bad, "--out", filepath.Join(dir, "no", "such", "dir.toml")}, []string{"dir.toml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, errs := runPerf(t, tt.args...)
			wantBadInput(t, code, stdout, errs, tt.want...)
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed fit left its output behind")
	}
}

func TestPerfValidateNoProfile(t *testing.T) {
	t.Chdir(t.TempDir())
	code, _, errs := runPerf(t, "validate")
	if code != 2 || !strings.Contains(errs, "--profile") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// TestPerfCalibrateHeldOut: perf calibrate --held-out measures the shared
// entries' leave-one-GPU-out error (here on a small slice of the shipped
// benchmarks: two GPUs, one engine and model) and writes it with the
// fit; without the flag the entries carry none.
func TestPerfCalibrateHeldOut(t *testing.T) {
	const shipped = "data/measured-serving/serving_benchmarks.csv"
	f, err := os.Open(shipped)
	if err != nil {
		t.Skipf("shipped benchmarks not available: %v", err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	keep := [][]string{recs[0]}
	per := map[string]int{}
	for _, r := range recs[1:] {
		gpu := r[col["system"]]
		if (gpu == "h200_sxm" || gpu == "b200_sxm") && r[col["backend"]] == "vllm" &&
			r[col["model_path"]] == "MiniMaxAI/MiniMax-M2.5" && r[col["mode"]] == "agg" && per[gpu] < 12 {
			per[gpu]++
			keep = append(keep, r)
		}
	}
	if per["h200_sxm"] == 0 || per["b200_sxm"] == 0 {
		t.Fatalf("no rows to calibrate on: %v", per)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "bench.csv")
	var b strings.Builder
	w := csv.NewWriter(&b)
	if err := w.WriteAll(keep); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, heldOut := range []bool{false, true} {
		out := filepath.Join(dir, "cal.toml")
		args := []string{"calibrate", "--measured", in, "--out", out}
		if heldOut {
			args = append(args, "--held-out")
		}
		code, stdout, errs := runPerf(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		has := regexp.MustCompile(`(?m)^\s*heldout_mape_ttft = [1-9]`).Match(data)
		if has != heldOut {
			t.Errorf("--held-out %v: the calibration's held-out figures present %v:\n%s", heldOut, has, data)
		}
		if strings.Contains(stdout, "held out (each GPU left out") != heldOut {
			t.Errorf("--held-out %v: report:\n%s", heldOut, stdout)
		}
	}
}
