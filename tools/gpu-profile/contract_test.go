// Package gpuprofile holds the Go side of the contract with profile.py, the
// GPU profiler users run on their own GPU (Python and PyTorch; not needed
// to build or test splitplan): its table has the columns, kinds and meta
// keys of the shared H100 measurement, and its built-in model shapes are
// splitplan's own.
package gpuprofile

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"splitplan/arch"
)

const sharedKernels = "../../../shared/data/gpu-kernels/h100/"

// pyList returns the string items of the Python list assigned to name in
// profile.py.
func pyList(t *testing.T, src, name string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?s)\n` + name + ` = \[(.*?)\]`).FindStringSubmatch(src)
	if m == nil {
		t.Fatalf("profile.py defines no list %s", name)
	}
	var out []string
	for _, q := range regexp.MustCompile(`"([^"]*)"`).FindAllStringSubmatch(m[1], -1) {
		out = append(out, q[1])
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

func sharedHeader(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(sharedKernels + file)
	if err != nil {
		t.Skipf("../shared is absent: %v", err)
	}
	defer f.Close()
	h, err := csv.NewReader(f).Read()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestColumnsMatchSharedMeasurement: profile.py writes the columns, kinds
// and meta keys of ../shared/data/gpu-kernels/h100, in the same order.
func TestColumnsMatchSharedMeasurement(t *testing.T) {
	src := readSource(t)
	cols := pyList(t, src, "COLUMNS")
	for _, file := range []string{"kernels.csv", "mixed.csv"} {
		if h := sharedHeader(t, file); !slices.Equal(cols, h) {
			t.Errorf("profile.py COLUMNS = %v, %s header = %v", cols, file, h)
		}
	}
	b, err := os.ReadFile(sharedKernels + "meta.json")
	if err != nil {
		t.Skipf("../shared is absent: %v", err)
	}
	// The keys in file order: '{', then key and value pairs.
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
	}
	if mk := pyList(t, src, "META_KEYS"); !slices.Equal(mk, keys) {
		t.Errorf("profile.py META_KEYS = %v, meta.json keys = %v", mk, keys)
	}
	kinds := pyList(t, src, "KINDS")
	for _, file := range []string{"kernels.csv", "mixed.csv"} {
		f, err := os.Open(sharedKernels + file)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows[1:] {
			if !slices.Contains(kinds, r[3]) {
				t.Errorf("%s: kind %q is not one profile.py knows (%v)", file, r[3], kinds)
			}
		}
	}
}

// TestBuiltinShapesAreSplitplans: every built-in shape of profile.py is
// the same architecture as splitplan's model of that name.
func TestBuiltinShapesAreSplitplans(t *testing.T) {
	src := readSource(t)
	re := regexp.MustCompile(`"([a-z0-9.\-]+)": dict\(layers=(\d+), hidden=(\d+), heads=(\d+), kv_heads=(\d+), head_dim=(\d+), ffn=(\d+), vocab=(\d+)\)`)
	ms := re.FindAllStringSubmatch(src, -1)
	if len(ms) < 2 {
		t.Fatalf("profile.py BUILTIN: found %d shapes, expected several", len(ms))
	}
	for _, m := range ms {
		a, err := arch.Lookup(m[1])
		if err != nil {
			t.Errorf("profile.py shape %s: %v", m[1], err)
			continue
		}
		n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
		got := []int{n(2), n(3), n(4), n(5), n(6), n(7), n(8)}
		want := []int{a.Layers, a.Hidden, a.Heads, a.KVHeads, a.HeadDimOrDefault(), a.Intermediate, a.Vocab}
		if !slices.Equal(got, want) {
			t.Errorf("profile.py shape %s = %v (layers, hidden, heads, kv, head dim, ffn, vocab), splitplan's = %v", m[1], got, want)
		}
		if a.IsMoE() || a.IsMLA() {
			t.Errorf("profile.py shape %s: splitplan's architecture is MoE or MLA, which profile.py cannot measure", m[1])
		}
	}
}

// TestDryRunPlan runs profile.py --dry-run (python3, no GPU, no torch):
// the header is the shared one, every planned row has a kind profile.py
// declares and the keys its kind needs, and bad input exits 2.
func TestDryRunPlan(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is absent")
	}
	src := readSource(t)
	kinds := pyList(t, src, "KINDS")
	cols := pyList(t, src, "COLUMNS")
	out, err := exec.Command("python3", "profile.py", "--dry-run", "--model", "llama3.1-70b", "--tp", "4,8", "--budget-minutes", "4").Output()
	if err != nil {
		t.Fatalf("profile.py --dry-run: %v", err)
	}
	rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rows[0], cols) {
		t.Fatalf("dry-run header %v, want %v", rows[0], cols)
	}
	seen := map[string]int{}
	for _, r := range rows[1:] {
		kind := r[3]
		if !slices.Contains(kinds, kind) {
			t.Errorf("planned row %v: kind %q not declared", r, kind)
		}
		seen[kind]++
		need := map[string][]int{"prefill": {1, 2, 4, 5}, "decode": {1, 2, 6, 7}, "mixed": {1, 2, 4, 5, 6, 7}, "gemm": {8, 9, 10}}[kind]
		for _, i := range need {
			if v, err := strconv.Atoi(r[i]); err != nil || v <= 0 {
				t.Errorf("planned %s row %v: column %s = %q, expected a positive integer", kind, r, cols[i], r[i])
			}
		}
	}
	for _, k := range []string{"prefill", "decode", "mixed", "gemm"} {
		if seen[k] < 3 {
			t.Errorf("the plan has %d %s rows, expected at least 3 (%v)", seen[k], k, seen)
		}
	}
	for _, args := range [][]string{{"--tp", "3"}, {"--model", "nope"}, {"--tp", "x"}, {"--budget-minutes", "0"}} {
		cmd := exec.Command("python3", append([]string{"profile.py", "--dry-run"}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "profile.py: ") {
			t.Errorf("profile.py --dry-run %v: err %v, stderr %q; want exit 2 with a message", args, err, stderr.String())
		}
	}
}
