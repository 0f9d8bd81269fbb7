package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// traceArgs writes a small synthetic trace to out.
func traceArgs(out string) []string {
	return []string{"trace", "generate", "--workload", "conversation", "--rps", "5", "--duration", "4s", "--seed", "3", "--out", out}
}

func TestOutputThroughSymlinkStaysSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.csv")
	if err := os.WriteFile(target, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink("real.csv", link); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, traceArgs(link)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	st, err := os.Lstat(link)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("%s is no longer a symlink (mode %v)", link, st.Mode())
	}
	data, _ := os.ReadFile(target)
	if !strings.HasPrefix(string(data), "arrival_timestamp") && !strings.Contains(string(data), "prompt") {
		t.Errorf("target not written through the link: %q", data)
	}
	if st, _ := os.Stat(target); st.Mode().Perm() != 0o600 {
		t.Errorf("target mode %v, want the 0600 it had", st.Mode().Perm())
	}
	assertNoTemp(t, dir)
}

// assertNoTemp fails if dir holds a temporary or probe file.
func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") || strings.Contains(e.Name(), ".probe") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestOutputWritesThroughFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- b
	}()
	code, _, errs := runCLI(t, traceArgs(fifo)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	select {
	case b := <-got:
		if n := bytes.Count(b, []byte("\n")); n < 10 {
			t.Errorf("read %d lines through the FIFO: %q", n, b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("nothing read from the FIFO")
	}
	st, err := os.Lstat(fifo)
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("%s is no longer a FIFO: %v %v", fifo, st.Mode(), err)
	}
	assertNoTemp(t, dir)
}

func TestOutputDashIsStdout(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	code, out, errs := runCLI(t, traceArgs("-")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "-")); err == nil {
		t.Error("wrote a file named -")
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 10 || strings.Contains(out, "wrote") {
		t.Errorf("stdout is not the bare CSV: %q", out)
	}
	if !strings.Contains(errs, "wrote") {
		t.Errorf("the report should move to stderr: %q", errs)
	}
	// Simulate: the requests CSV on stdout, the report on stderr.
	code, out, errs = runCLI(t, "simulate", "--design", "hh", "--prompt", "2", "--token", "1", "--rps", "2",
		"--duration", "5s", "--workload", "conversation", "--out", "-")
	if code != 0 {
		t.Fatalf("simulate exit %d: %s", code, errs)
	}
	if !strings.HasPrefix(out, "request_id,") || !strings.Contains(errs, "TTFT") {
		t.Errorf("simulate --out -: stdout %.80q, stderr %.200q", out, errs)
	}
	code, out, errs = runCLI(t, "simulate", "--design", "hh", "--prompt", "2", "--token", "1", "--rps", "2",
		"--duration", "5s", "--out", "-", "--machines-out", "/dev/stdout")
	wantBadInput(t, code, out, errs, "--out and --machines-out", "standard output")
}

// TestOutputCheckedBeforeWork gives each command an output it cannot
// write with a workload that would take long: the answer must be bad
// usage naming the flag, at once.
func TestOutputCheckedBeforeWork(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "no", "such", "out.csv")
	trace := filepath.Join(dir, "trace.csv")
	if code, _, errs := runCLI(t, "trace", "generate", "--workload", "coding", "--rps", "2", "--duration", "5s", "--out", trace); code != 0 {
		t.Fatal(errs)
	}
	before, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	long := []string{"--rps", "40", "--duration", "2h", "--workload", "conversation"}
	cases := []struct {
		name  string
		args  []string
		wants []string
	}{
		{"optimize_out_dir", append([]string{"optimize", "--goal", "cost", "--designs", "HH", "--out", dir}, long...), []string{"--out", "is a directory"}},
		{"optimize_points_missing", append([]string{"optimize", "--goal", "cost", "--designs", "HH", "--points", missing}, long...), []string{"--points", "does not exist"}},
		{"optimize_plot_file", append([]string{"optimize", "--goal", "cost", "--designs", "HH", "--plot", file}, long...), []string{"--plot", "expected a directory"}},
		{"optimize_plot_no_parent", append([]string{"optimize", "--goal", "cost", "--designs", "HH", "--plot", filepath.Join(dir, "a", "b")}, long...), []string{"--plot", "does not exist"}},
		{"simulate_out_dir", append([]string{"simulate", "--design", "hh", "--prompt", "3", "--token", "2", "--out", dir}, long...), []string{"--out", "is a directory"}},
		{"simulate_machines_missing", append([]string{"simulate", "--design", "hh", "--prompt", "3", "--token", "2", "--machines-out", missing}, long...), []string{"--machines-out", "does not exist"}},
		{"sweep_out_dir", []string{"sweep", "--design", "hh", "--prompt", "3", "--token", "2", "--rps", "10:100:1", "--duration", "1h", "--out", dir}, []string{"--out", "is a directory"}},
		{"sweep_plot_missing", []string{"sweep", "--design", "hh", "--prompt", "3", "--token", "2", "--rps", "10:100:1", "--duration", "1h", "--plot", filepath.Join(dir, "no", "x.png")}, []string{"--plot", "does not exist"}},
		{"trace_out_dir", []string{"trace", "generate", "--workload", "conversation", "--rps", "5", "--out", dir}, []string{"--out", "is a directory"}},
		{"perf_fit_missing", []string{"perf", "fit", "--profile", "no-such-profile.csv", "--out", missing}, []string{"--out", "does not exist"}},
		{"simulate_same_outputs", append([]string{"simulate", "--design", "hh", "--prompt", "3", "--token", "2", "--out", file, "--machines-out", file}, long...), []string{"--out and --machines-out name one file"}},
		{"optimize_same_outputs", append([]string{"optimize", "--goal", "cost", "--designs", "HH", "--out", file, "--points", filepath.Join(dir, ".", "file")}, long...), []string{"--out and --points name one file"}},
		{"simulate_out_is_trace", append([]string{"simulate", "--design", "hh", "--prompt", "3", "--token", "2", "--trace", trace, "--out", trace}, long[:4]...), []string{"--out", "is the --trace the command reads"}},
		{"trace_out_is_trace", []string{"trace", "generate", "--trace", trace, "--rps", "5", "--out", trace}, []string{"--out", "is the --trace the command reads"}},
		{"plot_cdf_dir", []string{"plot", "cdf", "--design", "hh", "--prompt", "3", "--token", "2", "--rps", "40", "--duration", "2h", "--out", filepath.Join(dir, "x.png", "")}, []string{"--out"}},
	}
	if err := os.Mkdir(filepath.Join(dir, "x.png"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, out, errs := runCLI(t, tc.args...)
			wantBadInput(t, code, out, errs, tc.wants...)
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %v: the output was not checked before the work", d)
			}
		})
	}
	assertNoTemp(t, dir)
	if after, err := os.ReadFile(trace); err != nil || string(after) != string(before) {
		t.Errorf("the input trace changed (%v)", err)
	}
}

// TestOutputStopsOnCancel: a write interrupted by the context leaves
// neither the file nor a temporary behind.
func TestOutputStopsOnCancel(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big.csv")
	ctx, cancel := context.WithCancel(context.Background())
	err := writeOutput(ctx, path, io.Discard, func(w io.Writer) error {
		for i := 0; i < 1_000_000; i++ {
			if i == 1000 {
				cancel()
			}
			if _, err := io.WriteString(w, strings.Repeat("x", 100)+"\n"); err != nil {
				return err
			}
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Errorf("left behind: %v", names)
	}
}
