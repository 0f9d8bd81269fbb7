package gpuprofile

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"splitplan/arch"
	"splitplan/evaluator/perf/kernel"
	"splitplan/hw"
)

// sharedDir is the project's measured H100 table, whose format the profiler
// must reproduce.
const sharedDir = "../../../shared/data/gpu-kernels/h100"

// acceptedKinds are the kind values of the gpu-kernels format
// (shared/data/gpu-kernels/README.md), the ones the kernels reader accepts.
var acceptedKinds = []string{"prefill", "decode", "mixed", "gemm", "copy", "idle"}

// pyList returns the string list assigned to name in profile.py
// (NAME = [ "a", "b", ... ]).
func pyList(t *testing.T, src, name string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?s)\n` + name + ` = [\[(](.*?)[\])]`).FindStringSubmatch(src)
	if m == nil {
		t.Fatalf("profile.py: no %s = [...]", name)
	}
	var out []string
	for _, s := range regexp.MustCompile(`"([^"]*)"`).FindAllStringSubmatch(m[1], -1) {
		out = append(out, s[1])
	}
	return out
}

func readSource(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("profile.py")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func csvHeader(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("shared table not beside the repository: %v", err)
	}
	defer f.Close()
	h, err := csv.NewReader(f).Read()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return h
}

// jsonKeys returns the top-level keys of a JSON object file, in order.
func jsonKeys(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("shared meta not beside the repository: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%s: not a JSON object (%v)", path, err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return keys
}

// TestColumnsMatchShared: profile.py's COLUMNS, META_KEYS and KINDS are the
// shared table's header (kernels.csv and mixed.csv), meta.json's keys (in
// order) and the format's kinds. Needs no Python.
func TestColumnsMatchShared(t *testing.T) {
	src := readSource(t)
	cols := pyList(t, src, "COLUMNS")
	for _, f := range []string{"kernels.csv", "mixed.csv"} {
		if h := csvHeader(t, filepath.Join(sharedDir, f)); !slices.Equal(cols, h) {
			t.Errorf("profile.py COLUMNS = %v, %s header = %v", cols, f, h)
		}
	}
	if meta, keys := pyList(t, src, "META_KEYS"), jsonKeys(t, filepath.Join(sharedDir, "meta.json")); !slices.Equal(meta, keys) {
		t.Errorf("profile.py META_KEYS = %v, meta.json keys = %v", meta, keys)
	}
	if kinds := pyList(t, src, "KINDS"); !slices.Equal(kinds, acceptedKinds) {
		t.Errorf("profile.py KINDS = %v, want %v", kinds, acceptedKinds)
	}
}

// dryRun is the parsed output of profile.py --dry-run.
type dryRun struct {
	metaKeys []string
	headers  map[string][]string   // file -> header
	rows     map[string][][]string // file -> rows
	estS     float64
	budgetS  float64
}

func python(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not available")
	}
	return p
}

func runDry(t *testing.T, args ...string) dryRun {
	t.Helper()
	cmd := exec.Command(python(t), append([]string{"profile.py", "--dry-run"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("profile.py --dry-run %v: %v\n%s", args, err, stderr.String())
	}
	d := dryRun{headers: map[string][]string{}, rows: map[string][][]string{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	file := ""
	est := regexp.MustCompile(`^# estimated time: (\d+) s of a (\d+) s budget`)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "# meta keys: "):
			d.metaKeys = strings.Split(strings.TrimPrefix(line, "# meta keys: "), ",")
		case est.MatchString(line):
			m := est.FindStringSubmatch(line)
			d.estS, _ = strconv.ParseFloat(m[1], 64)
			d.budgetS, _ = strconv.ParseFloat(m[2], 64)
		case strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "== "):
			file = strings.TrimPrefix(line, "== ")
		default:
			rec, err := csv.NewReader(strings.NewReader(line)).Read()
			if err != nil {
				t.Fatalf("dry run line %q: %v", line, err)
			}
			if d.headers[file] == nil {
				d.headers[file] = rec
			} else {
				d.rows[file] = append(d.rows[file], rec)
			}
		}
	}
	return d
}

// TestDryRunContract: the dry run's headers are the shared header, its meta
// keys meta.json's, and every planned row has that many fields, a kind the
// format accepts, the columns that kind needs (positive integers) and
// none it must leave empty.
func TestDryRunContract(t *testing.T) {
	t.Parallel() // (each starts Python; they share no file)
	want := csvHeader(t, filepath.Join(sharedDir, "kernels.csv"))
	metaWant := jsonKeys(t, filepath.Join(sharedDir, "meta.json"))
	for _, args := range [][]string{
		{},
		{"--model", "llama3.1-70b", "--tp", "8,4", "--budget-minutes", "10"},
		{"--model", "meta-llama/Llama-3.1-8B-Instruct", "--budget-minutes", "1"},
	} {
		d := runDry(t, args...)
		if !slices.Equal(d.metaKeys, metaWant) {
			t.Errorf("%v: meta keys %v, want %v", args, d.metaKeys, metaWant)
		}
		col := map[string]int{}
		for i, c := range want {
			col[c] = i
		}
		kinds := map[string]int{}
		for _, f := range []string{"kernels.csv", "mixed.csv"} {
			if !slices.Equal(d.headers[f], want) {
				t.Errorf("%v: %s header %v, want %v", args, f, d.headers[f], want)
			}
			for _, r := range d.rows[f] {
				if len(r) != len(want) {
					t.Fatalf("%v: %s row %v has %d fields, want %d", args, f, r, len(r), len(want))
				}
				k := r[col["kind"]]
				kinds[k]++
				if !slices.Contains(acceptedKinds, k) {
					t.Errorf("%v: %s row %v: kind %q not in %v", args, f, r, k, acceptedKinds)
				}
				var need []string
				switch k {
				case "prefill":
					need = []string{"tp", "layers", "prompts", "tokens_per_prompt"}
				case "decode":
					need = []string{"tp", "layers", "batch", "context_per_request"}
				case "mixed":
					need = []string{"tp", "layers", "prompts", "tokens_per_prompt", "batch", "context_per_request"}
				case "gemm":
					need = []string{"m", "n", "k"}
				case "copy":
					need = []string{"m"}
				}
				for _, c := range need {
					if v, err := strconv.Atoi(r[col[c]]); err != nil || v <= 0 {
						t.Errorf("%v: %s row %v: %s = %q, want a positive integer", args, f, r, c, r[col[c]])
					}
				}
				if k != "idle" && r[col["time_ms"]] != "" {
					t.Errorf("%v: %s row %v: a dry run measured time_ms", args, f, r)
				}
			}
		}
		for _, k := range []string{"prefill", "decode", "gemm"} {
			if kinds[k] == 0 {
				t.Errorf("%v: no %s rows planned (%v)", args, k, kinds)
			}
		}
	}
	// The budget thins the grid: a longer budget plans more rows, within it.
	short, long := runDry(t, "--budget-minutes", "1"), runDry(t, "--budget-minutes", "10")
	if n, m := len(short.rows["kernels.csv"]), len(long.rows["kernels.csv"]); n >= m {
		t.Errorf("1-minute plan has %d kernels rows, 10-minute %d: want fewer", n, m)
	}
	if long.estS > long.budgetS {
		t.Errorf("10-minute plan estimated at %.0f s, over its %.0f s budget", long.estS, long.budgetS)
	}
}

// TestDryRunFP8: --weights fp8 plans every iteration row of the model
// under its name with an -fp8 suffix and the fp8 note, rows the kernel
// reader takes for that model's architecture at fp8 weights
// (kernel.Row.Precision), with the GEMM rows beside them.
func TestDryRunFP8(t *testing.T) {
	t.Parallel() // (each starts Python; they share no file)
	d := runDry(t, "--weights", "fp8", "--budget-minutes", "2")
	want := csvHeader(t, filepath.Join(sharedDir, "kernels.csv"))
	col := map[string]int{}
	for i, c := range want {
		col[c] = i
	}
	iters, gemms := 0, 0
	for _, f := range []string{"kernels.csv", "mixed.csv"} {
		for _, r := range d.rows[f] {
			switch r[col["kind"]] {
			case "prefill", "decode", "mixed":
				iters++
				row := kernel.Row{Model: r[col["model"]], Kind: kernel.Kind(r[col["kind"]])}
				if row.Model != "llama3.1-8b-fp8" || !strings.Contains(r[col["note"]], "weights=fp8 e4m3") || row.Precision() != arch.FP8 {
					t.Errorf("%s row %v: want model llama3.1-8b-fp8 with the fp8 note, read as fp8", f, r)
				}
				if a, err := row.Arch(); err != nil || a.Name != "llama3.1-8b" {
					t.Errorf("%s row %v: architecture %q, %v; want llama3.1-8b", f, r, a.Name, err)
				}
			case "gemm":
				gemms++
			}
		}
	}
	if iters < 40 || gemms == 0 {
		t.Errorf("two-minute fp8 plan: %d iteration rows, %d GEMM rows", iters, gemms)
	}
}

// TestDryRunRefusals: unsupported architectures (linear attention,
// interleaved MoE layers, an incomplete latent-attention config, a
// sliding-window model cut by --max-layers) and bad flags exit 2 with a
// message naming the problem; gpt-oss-120b at TP 8 and a dense,
// two mixture-of-experts and two latent-attention (DeepSeek-V3, with and
// without a query rank) config.json files and the MLA built-ins are
// accepted. Under -short every other case runs.
func TestDryRunRefusals(t *testing.T) {
	t.Parallel() // (each starts Python; they share no file)
	py := python(t)
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dense := write("dense.json", `{"model_type":"llama","num_hidden_layers":16,"hidden_size":2048,"num_attention_heads":32,`+
		`"num_key_value_heads":8,"intermediate_size":8192,"vocab_size":128256,"hidden_act":"silu"}`)
	moe := write("moe.json", `{"model_type":"mixtral","num_hidden_layers":32,"hidden_size":4096,"num_attention_heads":32,`+
		`"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":32000,"num_local_experts":8,"num_experts_per_tok":2}`)
	noK := write("nok.json", `{"model_type":"mixtral","num_hidden_layers":32,"hidden_size":4096,"num_attention_heads":32,`+
		`"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":32000,"num_local_experts":8}`)
	qwen2moe := write("qwen2moe.json", `{"model_type":"qwen2_moe","num_hidden_layers":24,"hidden_size":2048,"num_attention_heads":16,`+
		`"num_key_value_heads":16,"intermediate_size":5632,"moe_intermediate_size":1408,"shared_expert_intermediate_size":5632,`+
		`"vocab_size":151936,"num_experts":60,"num_experts_per_tok":4,"use_sliding_window":false,"sliding_window":32768,"mlp_only_layers":[]}`)
	sparse := write("sparse.json", `{"model_type":"qwen3_moe","num_hidden_layers":48,"hidden_size":2048,"num_attention_heads":32,`+
		`"num_key_value_heads":4,"head_dim":128,"intermediate_size":6144,"moe_intermediate_size":768,"vocab_size":151936,`+
		`"num_experts":128,"num_experts_per_tok":8,"decoder_sparse_step":2}`)
	const dsv3 = `{"model_type":"deepseek_v3","num_hidden_layers":61,"hidden_size":7168,"num_attention_heads":128,` +
		`"num_key_value_heads":128,"intermediate_size":18432,"moe_intermediate_size":2048,"vocab_size":129280,"n_routed_experts":256,` +
		`"n_shared_experts":1,"first_k_dense_replace":3,"moe_layer_freq":1,"num_experts_per_tok":8,"hidden_act":"silu",` +
		`"kv_lora_rank":512,"q_lora_rank":%s,"qk_rope_head_dim":64,"qk_nope_head_dim":128,"v_head_dim":%s}`
	mla := write("mla.json", fmt.Sprintf(dsv3, "1536", "128"))
	mlaNoQ := write("mla-noq.json", fmt.Sprintf(dsv3, "null", "128"))
	mlaNoV := write("mla-nov.json", fmt.Sprintf(dsv3, "1536", "null"))
	mlaType := write("mla-type.json", strings.Replace(fmt.Sprintf(dsv3, "1536", "128"), "deepseek_v3", "deepseek_v2", 1))
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--config", dense, "--tp", "2"}, 0, ""},
		{[]string{"--config", moe, "--tp", "2"}, 0, ""},
		{[]string{"--config", qwen2moe, "--tp", "4"}, 0, ""},
		{[]string{"--config", noK}, 2, "num_experts_per_tok"},
		{[]string{"--config", sparse}, 2, "interleaves dense and MoE layers"},
		{[]string{"--config", mla, "--tp", "8", "--max-layers", "4"}, 0, ""},
		{[]string{"--config", mlaNoQ, "--tp", "8", "--max-layers", "4"}, 0, ""},
		{[]string{"--config", mlaNoV}, 2, "v_head_dim"},
		{[]string{"--config", mlaType}, 2, "model_type 'deepseek_v2' not supported"},
		{[]string{"--model", "deepseek-r1", "--tp", "8", "--max-layers", "4"}, 0, ""},
		{[]string{"--model", "kimi-k2.5", "--tp", "8", "--max-layers", "2"}, 0, ""},
		{[]string{"--model", "deepseek-r1", "--max-layers", "3"}, 2, "--max-layers 3: model deepseek-r1 needs at least 4"},
		{[]string{"--model", "deepseek-r1", "--tp", "3"}, 2, "--tp 3"},
		{[]string{"--model", "gpt-oss-120b", "--tp", "8"}, 0, ""},
		{[]string{"--model", "gpt-oss-120b", "--tp", "8", "--max-layers", "4"}, 2, "sliding-window layers"},
		{[]string{"--model", "qwen3.5-397b-a17b"}, 2, "linear-attention"},
		{[]string{"--model", "mixtral-8x7b", "--tp", "3"}, 2, "--tp 3"},
		{[]string{"--model", "mixtral-8x7b", "--max-layers", "0"}, 2, "--max-layers 0"},
		{[]string{"--model", "nosuchmodel"}, 2, "unknown"},
		{[]string{"--model", "llama3.1-70b", "--tp", "3"}, 2, "--tp 3"},
		{[]string{"--tp", "x"}, 2, "--tp"},
		{[]string{"--budget-minutes", "0"}, 2, "--budget-minutes"},
		{[]string{"--model", "mixtral-8x7b", "--tp", "2", "--weights", "fp8"}, 2, "routed experts; fp8 weights are measured for dense models only"},
		{[]string{"--model", "deepseek-r1", "--tp", "8", "--max-layers", "4", "--weights", "fp8"}, 2, "latent attention"},
		{[]string{"--weights", "fp16"}, 2, "--weights"},
	}
	for i, c := range cases {
		if testing.Short() && i%2 != 0 {
			// Each case starts Python (about 0.5 s): under -short every
			// other one, the full suite every one.
			continue
		}
		cmd := exec.Command(py, append([]string{"profile.py", "--dry-run"}, c.args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.code || !strings.Contains(stderr.String(), c.msg) || strings.Contains(stderr.String(), "Traceback") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, stderr.String(), c.code, c.msg)
		}
	}
}

// TestForwardMock runs test_forward_mock.py (profile.py's forward passes on
// a numpy stand-in for torch) when some python3 with numpy is available.
func TestForwardMock(t *testing.T) {
	t.Parallel() // (each starts Python; they share no file)
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		p, err := exec.LookPath(py)
		if err != nil || exec.Command(p, "-c", "import numpy").Run() != nil {
			continue
		}
		out, err := exec.Command(p, "test_forward_mock.py").CombinedOutput()
		if err != nil {
			t.Fatalf("%s test_forward_mock.py: %v\n%s", p, err, out)
		}
		return
	}
	t.Skip("no python3 with numpy")
}

// readTimes reads the iteration, GEMM and copy rows of a kernels-format CSV
// into their times in ms, keyed by every column that names the work (the
// first reading of each), as h100Run is.
func readTimes(t *testing.T, path string) map[string]float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("no %s: %v", path, err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[strings.TrimSpace(h)] = i
	}
	out := map[string]float64{}
	for _, r := range recs[1:] {
		kind := r[col["kind"]]
		if kind == "idle" {
			continue
		}
		var key []string
		for _, c := range []string{"model", "tp", "kind", "prompts", "tokens_per_prompt", "batch", "context_per_request", "m", "n", "k"} {
			key = append(key, r[col[c]])
		}
		ms, err := strconv.ParseFloat(r[col["time_ms"]], 64)
		if err != nil {
			t.Fatalf("%s: time_ms %q: %v", path, r[col["time_ms"]], err)
		}
		k := strings.Join(key, ",")
		if _, dup := out[k]; !dup {
			out[k] = ms
		}
	}
	return out
}

// TestRunOnH100MatchesShared: the profiler, run on a real H100 (h100Run,
// 2026-11-27: Llama-3.1-8B TP 1 and 70B TP 8, the README's "Where it has
// been run"), measures what the shared H100 table measured for the same
// work: iterations within 3% each (median 0.3%), GEMMs and the copy with a
// median within 2% (small GEMMs vary more).
func TestRunOnH100MatchesShared(t *testing.T) {
	mine := h100Run
	ref := readTimes(t, filepath.Join(sharedDir, "kernels.csv"))
	for k, v := range readTimes(t, filepath.Join(sharedDir, "mixed.csv")) {
		if _, ok := ref[k]; !ok {
			ref[k] = v
		}
	}
	var iter, other []float64
	for k, v := range mine {
		r, ok := ref[k]
		if !ok {
			continue
		}
		d := 100 * math.Abs(v-r) / r
		if strings.Contains(k, ",gemm,") || strings.Contains(k, ",copy,") {
			other = append(other, d)
			continue
		}
		iter = append(iter, d)
		if d > 3 {
			t.Errorf("%s: %.4g ms against the shared table's %.4g (%.1f%%)", k, v, r, d)
		}
	}
	slices.Sort(iter)
	slices.Sort(other)
	if len(iter) < 40 || len(other) < 15 {
		t.Fatalf("%d iteration and %d GEMM/copy rows in common with the shared table", len(iter), len(other))
	}
	t.Logf("iterations: %d rows, median %.2f%%, max %.2f%%; GEMMs and copy: %d rows, median %.2f%%, max %.2f%%",
		len(iter), iter[len(iter)/2], iter[len(iter)-1], len(other), other[len(other)/2], other[len(other)-1])
	if m := iter[len(iter)/2]; m > 1 {
		t.Errorf("iterations: median difference %.2f%%, want ≤ 1%%", m)
	}
	if m := other[len(other)/2]; m > 2 {
		t.Errorf("GEMMs and copy: median difference %.2f%%, want ≤ 2%%", m)
	}
}

// TestDryRunMoE: an MoE model's plan (all its layers, and its first layers
// with --max-layers) reads back through the kernel layer's reader: with a
// time filled in, every iteration row is a row of that model (its layers
// as run: Row.Arch), the kernel layer predicts it, and its note names the
// routing and the grouped-GEMM backend; the GEMM rows include one
// expert's gate-up and down shapes at the TP share and no dense FFN.
func TestDryRunMoE(t *testing.T) {
	t.Parallel() // (each starts Python; they share no file)
	g, err := hw.Lookup("h100_sxm")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args          []string
		model         string
		layers, moeL  int
		expertN, expK string
	}{
		{[]string{"--model", "mixtral-8x7b", "--tp", "2", "--budget-minutes", "2"}, "mixtral-8x7b", 32, 32, "14336", "7168"},
		{[]string{"--model", "Qwen/Qwen3-235B-A22B", "--tp", "1", "--max-layers", "3", "--budget-minutes", "2"}, "qwen3-235b-a22b", 3, 3, "3072", "1536"},
	} {
		iters, expertGEMMs := 0, 0
		buf := runDry(t, c.args...).timed(func(r planRow) {
			switch r.get("kind") {
			case "prefill", "decode", "mixed":
				iters++
				r.noteHas(t, c.args, "moe: ", "TP-sharded experts", "routing=uniform-random fixed per shape", "experts=grouped_mm")
			case "gemm":
				n, k := r.get("n"), r.get("k")
				if strings.Contains(r.get("note"), "expert_") {
					expertGEMMs++
					if !(n == c.expertN && k == "4096" || n == "4096" && k == c.expK) {
						t.Errorf("%v: expert GEMM %v: want n×k %s×4096 or 4096×%s", c.args, r.r, c.expertN, c.expK)
					}
				}
				if strings.Contains(r.get("note"), " gate_up") || strings.Contains(r.get("note"), " down") {
					t.Errorf("%v: dense FFN GEMM %v planned for a model without dense layers", c.args, r.r)
				}
			}
		})
		if iters == 0 || expertGEMMs == 0 {
			t.Fatalf("%v: %d iteration rows, %d expert GEMM rows planned", c.args, iters, expertGEMMs)
		}
		n := readBack(t, buf, c.args, g, func(r kernel.Row, a arch.Arch) string {
			if a.Name != c.model || a.Layers != c.layers || a.MoELayers() != c.moeL || !r.IsMoE() {
				return fmt.Sprintf("%s with %d layers (%d MoE), want %s with %d (%d)", a.Name, a.Layers, a.MoELayers(), c.model, c.layers, c.moeL)
			}
			return ""
		})
		if n != iters {
			t.Errorf("%v: %d iteration rows read back of %d planned", c.args, n, iters)
		}
	}
}

// TestDryRunMLA: a multi-head latent attention model's first layers at TP 8
// (DeepSeek-R1 with its 3 dense layers and one MoE layer, Kimi-K2.5 with
// one dense and three MoE layers; the whole model does not fit one GPU at
// TP 8, so it plans no iteration) read back through the kernel layer's
// reader as MLA rows it predicts; the planned cache is the latent, whole on
// every GPU (arch.KVBytesPerTokenPerGPU); the GEMM rows are the latent
// projections at the TP share: the down-projections q_a and kv_a whole on
// every GPU, as engines run them (so one GPU's projection weights exceed
// AttentionParamsPerLayer / tp by (tp − 1)/tp of theirs), the
// up-projections and O split by heads.
func TestDryRunMLA(t *testing.T) {
	t.Parallel() // (each starts Python; they share no file)
	g, err := hw.Lookup("h100_sxm")
	if err != nil {
		t.Fatal(err)
	}
	const tp = 8
	for _, model := range []string{"deepseek-r1", "kimi-k2.5"} {
		a, err := arch.Lookup(model)
		if err != nil {
			t.Fatal(err)
		}
		// the whole model: weights over the GPU at TP 8, no iteration planned
		full := runDry(t, "--model", model, "--tp", "8")
		for _, f := range []string{"kernels.csv", "mixed.csv"} {
			for _, r := range full.rows[f] {
				if r[0] == model {
					t.Errorf("%s TP 8, all layers: iteration %v planned on an 80 GB GPU", model, r)
				}
			}
		}
		args := []string{"--model", model, "--tp", "8", "--max-layers", "4", "--budget-minutes", "3"}
		heads := a.Heads / tp
		wantGEMM := map[string][2]int{
			"q_a":  {a.QLoraRank, a.Hidden},
			"q_b":  {heads * (a.QKNopeHeadDim + a.QKRopeHeadDim), a.QLoraRank},
			"kv_a": {a.KVLoraRank + a.QKRopeHeadDim, a.Hidden},
			"kv_b": {heads * (a.QKNopeHeadDim + a.VHeadDim), a.KVLoraRank},
			"o":    {a.Hidden, heads * a.VHeadDim},
		}
		var attnParams int
		for _, nk := range wantGEMM {
			attnParams += nk[0] * nk[1]
		}
		down := a.Hidden * (a.QLoraRank + a.KVLoraRank + a.QKRopeHeadDim)
		if got, want := float64(attnParams), float64(a.AttentionParamsPerLayer())/tp+float64(down)*(tp-1)/tp; math.Abs(got-want) > 1 {
			t.Errorf("%s: per-GPU projection weights %v, want AttentionParamsPerLayer/tp + (tp-1)/tp × down-projections = %v", model, got, want)
		}
		kvFull, _ := a.KVBytesPerTokenPerGPU(arch.BF16, tp)
		perLayer := kvFull / float64(a.Layers)
		iters, kvChecked := 0, 0
		seen := map[string]bool{}
		buf := runDry(t, args...).timed(func(r planRow) {
			switch kind := r.get("kind"); kind {
			case "prefill", "decode", "mixed":
				iters++
				wants := []string{fmt.Sprintf("mla %d of %d heads per GPU", heads, a.Heads), "moe: "}
				if kind != "decode" {
					wants = append(wants, "causal flash qk 192 v 128 (V padded to 192)")
				}
				if kind != "prefill" {
					wants = append(wants, "absorbed W_UK/W_UV", "512+64 latent", "bmm-softmax-bmm")
				}
				r.noteHas(t, args, wants...)
				if gb, b, c, ok := r.plannedKV(); ok {
					if want := fmt.Sprintf("%.1f", 4*perLayer*float64(b)*float64(c)/1e9); gb != want {
						t.Errorf("%v: row %v: planned KV %s GB, arch's latent gives %s", args, r.r, gb, want)
					}
					kvChecked++
				}
			case "gemm":
				name := strings.Fields(r.get("note"))[1]
				if nk, ok := wantGEMM[name]; ok {
					seen[name] = true
					if r.get("n") != strconv.Itoa(nk[0]) || r.get("k") != strconv.Itoa(nk[1]) {
						t.Errorf("%v: %s GEMM n×k %s×%s, want %d×%d", args, name, r.get("n"), r.get("k"), nk[0], nk[1])
					}
				}
				if name == "qkv" {
					t.Errorf("%v: a fused QKV GEMM planned for a latent-attention model: %v", args, r.r)
				}
			}
		})
		if iters < 20 || len(seen) != len(wantGEMM) || kvChecked < 10 {
			t.Fatalf("%v: %d iteration rows, GEMMs %v, %d KV sizes checked", args, iters, seen, kvChecked)
		}
		n := readBack(t, buf, args, g, func(r kernel.Row, ra arch.Arch) string {
			if ra.Name != model || ra.Layers != 4 || !ra.IsMLA() || ra.MoELayers() != 4-a.FirstDenseLayers || !r.IsMoE() || !r.IsMLA() {
				return fmt.Sprintf("%s with %d layers (%d MoE, MLA %v)", ra.Name, ra.Layers, ra.MoELayers(), ra.IsMLA())
			}
			return ""
		})
		if n != iters {
			t.Errorf("%v: %d iteration rows read back of %d planned", args, n, iters)
		}
	}
}

// TestDryRunSlidingWindow: gpt-oss-120b at TP 8 (all its layers: the
// kernel reader takes no --max-layers for a model whose window layers'
// order it does not record, and the profiler refuses it) reads back as
// rows the kernel layer predicts; the notes name the window on
// arch's SlidingWindowLayers of its layers, and the planned KV bytes are
// arch's per GPU: full layers the whole context, windowed ones at most the
// window.
func TestDryRunSlidingWindow(t *testing.T) {
	t.Parallel() // (each starts Python; they share no file)
	g, err := hw.Lookup("h100_sxm")
	if err != nil {
		t.Fatal(err)
	}
	const model, tp = "gpt-oss-120b", 8
	a, err := arch.Lookup(model)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--model", model, "--tp", "8", "--budget-minutes", "3"}
	full, win := a.KVBytesPerTokenPerGPU(arch.BF16, tp)
	iters, kvChecked := 0, 0
	buf := runDry(t, args...).timed(func(r planRow) {
		switch kind := r.get("kind"); kind {
		case "prefill", "decode", "mixed":
			iters++
			wants := []string{fmt.Sprintf("window %d on %d of %d layers", a.SlidingWindow, a.SlidingWindowLayers, a.Layers), "no attention sinks", "moe: "}
			if kind != "decode" {
				wants = append(wants, "window-kernel=flash-attn")
			}
			if kind != "prefill" {
				wants = append(wants, fmt.Sprintf("decodes read the last %d cached tokens", a.SlidingWindow))
			}
			r.noteHas(t, args, wants...)
			if gb, b, c, ok := r.plannedKV(); ok {
				kv := float64(b) * (full*float64(c) + win*float64(min(c, a.SlidingWindow)))
				if want := fmt.Sprintf("%.1f", kv/1e9); gb != want {
					t.Errorf("%v: row %v: planned KV %s GB, arch gives %s", args, r.r, gb, want)
				}
				kvChecked++
			}
		}
	})
	if iters < 20 || kvChecked < 10 {
		t.Fatalf("%v: %d iteration rows, %d KV sizes checked", args, iters, kvChecked)
	}
	readBack(t, buf, args, g, func(r kernel.Row, ra arch.Arch) string {
		if ra.Name != model || ra.Layers != a.Layers || ra.SlidingWindowLayers != a.SlidingWindowLayers || !r.IsMoE() {
			return fmt.Sprintf("%s with %d layers (%d windowed)", ra.Name, ra.Layers, ra.SlidingWindowLayers)
		}
		return ""
	})
}

// planRow is one row of a dry-run plan, read by its header's names.
type planRow struct {
	r   []string
	col map[string]int
}

// get returns the row's column name.
func (p planRow) get(name string) string { return p.r[p.col[name]] }

// noteHas reports each of wants the row's note lacks.
func (p planRow) noteHas(t *testing.T, args []string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(p.get("note"), want) {
			t.Errorf("%v: row %v: note lacks %q", args, p.r, want)
		}
	}
}

var kvNote = regexp.MustCompile(`^kv (\d+\.\d) GB`)

// plannedKV returns the KV cache an iteration row's note plans ("kv 1.2
// GB ..."), as printed, with the row's batch and context per request; ok
// is false when the note plans none.
func (p planRow) plannedKV() (gb string, batch, ctx int, ok bool) {
	m := kvNote.FindStringSubmatch(p.get("note"))
	if m == nil {
		return "", 0, 0, false
	}
	batch, _ = strconv.Atoi(p.get("batch"))
	ctx, _ = strconv.Atoi(p.get("context_per_request"))
	return m[1], batch, ctx, true
}

// timed calls visit on every row of the plan's kernels.csv and mixed.csv
// but the idle rows, and returns the plan as one kernels.csv, every row
// timed 1.5 ms, as the kernel layer's reader takes it (readBack).
func (d dryRun) timed(visit func(planRow)) *bytes.Buffer {
	head := d.headers["kernels.csv"]
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write(head)
	for _, f := range []string{"kernels.csv", "mixed.csv"} {
		for _, r := range d.rows[f] {
			p := planRow{slices.Clone(r), col}
			if p.get("kind") == "idle" {
				continue
			}
			visit(p)
			p.r[col["time_ms"]] = "1.5"
			_ = w.Write(p.r)
		}
	}
	w.Flush()
	return &buf
}

// readBack reads a dry-run plan (the kernels.csv format) with the kernel
// layer's reader, checks every iteration row's architecture with check
// (which returns what is wrong, or "") and that the kernel layer predicts
// it a positive time on g, and returns the iteration rows read.
func readBack(t *testing.T, plan io.Reader, args []string, g hw.GPU, check func(kernel.Row, arch.Arch) string) int {
	t.Helper()
	rows, err := kernel.ReadCSV(plan, "plan.csv")
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	n := 0
	for _, r := range rows {
		if !r.IsIteration() {
			continue
		}
		n++
		a, err := r.Arch()
		if err != nil {
			t.Fatalf("%v: line %d: %v", args, r.Line, err)
		}
		if msg := check(r, a); msg != "" {
			t.Fatalf("%v: line %d: %s", args, r.Line, msg)
		}
		if p, err := kernel.Predict(kernel.Default, g, r); err != nil || !(p > 0) {
			t.Fatalf("%v: line %d: predicted %v, %v", args, r.Line, p, err)
		}
	}
	return n
}
