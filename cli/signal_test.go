package cli

import (
	"bytes"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// buildBinary builds splitplan into a temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build with: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "splitplan")
	cmd := exec.Command(goBin, "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// syncBuffer is a bytes.Buffer safe for a process to write while the
// test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// interrupt starts bin with args, sends sig after wait or, when waitFor
// is not empty, once stderr shows it, and returns the exit status, stderr
// and how long the process took to exit after the signal.
// stopLimit is how long a command may take to exit after a signal: the
// target is a second (each command measures well under it: 4–300 ms, the
// exhaustive heatmap 0.3–0.6 s), with a second's margin for the packages
// go test runs beside this one on a two-core machine.
const stopLimit = 2 * time.Second

func interrupt(t *testing.T, bin string, sig syscall.Signal, wait time.Duration, waitFor string, args ...string) (int, string, time.Duration) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	// Progress on a pipe, as on a terminal, so that waitFor can see it.
	cmd.Env = append(os.Environ(), "SPLITPLAN_PROGRESS=1")
	var errb syncBuffer
	cmd.Stdout, cmd.Stderr = &bytes.Buffer{}, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(wait)
	for deadline := time.Now().Add(120 * time.Second); waitFor != "" && !strings.Contains(errb.String(), waitFor); {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("%v: stderr never showed %q: %s", args, waitFor, errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	sent := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("%v: still running 30 s after %v", args, sig)
	}
	return cmd.ProcessState.ExitCode(), errb.String(), time.Since(sent)
}

// stopsCleanly runs bin with args, signals it after wait, and checks that it says it was interrupted, stopped
// within stopLimit and left nothing in dir; it returns the exit status.
func stopsCleanly(t *testing.T, bin string, sig syscall.Signal, wait time.Duration, dir string, args ...string) int {
	t.Helper()
	code, errs, took := interrupt(t, bin, sig, wait, "", args...)
	if !strings.Contains(errs, "interrupted") {
		t.Errorf("exit %d after %v, stderr %q", code, sig, errs)
	}
	if took > stopLimit {
		t.Errorf("took %v to stop after %v", took, sig)
	}
	t.Logf("stopped %v after %v", took, sig)
	if names := leftovers(t, dir); len(names) > 0 {
		t.Errorf("left behind: %v", names)
	}
	return code
}

// leftovers lists the files of dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestSignals(t *testing.T) {
	bin := buildBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run("simulate_"+sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			// About a million conversation requests on a baseline
			// batching Sarathi-style (among the slowest simulations per
			// request): 3.7 s on a fast idle machine, whose simulator
			// finishes Splitwise-HH's million in 1.5 s. The signal goes
			// after 0.3 s, once main has long installed its handler:
			// during the trace's synthesis or early in the simulation,
			// either of which the command must stop.
			code := stopsCleanly(t, bin, sig, 300*time.Millisecond, dir, "simulate", "--design", "h100", "--machines", "40",
				"--policy", "sarathi", "--workload", "conversation", "--rps", "70", "--duration", "4h",
				"--out", filepath.Join(dir, "requests.csv"), "--machines-out", filepath.Join(dir, "machines.csv"))
			if code == 0 {
				t.Errorf("exit 0 after %v", sig)
			}
		})
		t.Run("optimize_"+sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "optima.csv")
			// The baseline's search (a line of 160 points, ~9 simulations)
			// ends long before the three Splitwise designs' (~30 each):
			// the signal goes once the progress says it finished.
			code, errs, took := interrupt(t, bin, sig, 0, "Baseline-H100 finished", "optimize", "--goal", "cost", "--rps", "60", "--duration", "2400s",
				"--designs", "Baseline-H100,HH,HA,AA", "-j", "2", "--out", out, "--points", filepath.Join(dir, "points.csv"))
			if code == 0 || !strings.Contains(errs, "interrupted") {
				t.Fatalf("exit %d after %v, stderr %q", code, sig, errs)
			}
			if took > stopLimit {
				t.Errorf("took %v to stop after %v", took, sig)
			}
			if names := leftovers(t, dir); len(names) != 1 || names[0] != "optima.csv" {
				t.Fatalf("files left: %v, want the partial optima.csv alone; stderr %q", names, errs)
			}
			f, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rows, err := csv.NewReader(f).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			head := rows[0]
			if head[len(head)-1] != "partial" || len(rows) < 2 || len(rows) > 4 {
				t.Fatalf("partial optima (want 1 to 3 of the 4 designs): %v", rows)
			}
			// Each finished design's row is complete: a feasible optimum
			// with its counts, as an uninterrupted search writes it.
			for _, row := range rows[1:] {
				col := map[string]string{}
				for i, h := range head {
					col[h] = row[i]
				}
				if col["feasible"] != "true" || col["machines"] == "0" || col["simulations"] == "0" || col["rps"] != "60" ||
					col["binding_slo"] == "" || col["perf_provenance"] == "" || col["partial"] != "true" {
					t.Errorf("finished design's row: %v", col)
				}
				if !strings.Contains(errs, row[0]) {
					t.Errorf("stderr does not name %s: %q", row[0], errs)
				}
			}
			if !strings.Contains(errs, "marked partial; not finished: ") {
				t.Errorf("stderr does not say what was written: %q", errs)
			}
		})
	}
}

// TestSignalsPerf: perf validate --measured --cross-validate gpu (a
// schedule simulation per row, then a fit per left-out GPU) and perf
// calibrate --held-out stop soon after SIGINT or SIGTERM (the context is
// checked in every Nelder–Mead iteration and in the schedule
// simulation), say so, and write no output file. The signal goes after
// 1 s, during the schedules, or 2.5 s, during the fits.
func TestSignalsPerf(t *testing.T) {
	bin := buildBinary(t)
	const csvPath = "data/measured-serving/serving_benchmarks.csv"
	if _, err := os.Stat(csvPath); err != nil {
		t.Skip("../shared not present")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		validate := func(dir string) []string {
			return []string{"perf", "validate", "--measured", csvPath, "--cross-validate", "gpu", "--out", filepath.Join(dir, "held-out.csv")}
		}
		for _, tc := range []struct {
			name string
			wait time.Duration
			args func(dir string) []string
		}{
			{"perf_validate_cross_validate", time.Second, validate},
			// Later, in the folds' fits (the schedules take about 1.5 s
			// here, 0.7 s on an idle machine; the folds 4 s or more).
			{"perf_validate_cross_validate_fits", 2500 * time.Millisecond, validate},
			{"perf_calibrate", time.Second, func(dir string) []string {
				return []string{"perf", "calibrate", "--measured", csvPath, "--held-out", "--out", filepath.Join(dir, "calibration.toml")}
			}},
		} {
			t.Run(tc.name+"_"+sig.String(), func(t *testing.T) {
				dir := t.TempDir()
				if code := stopsCleanly(t, bin, sig, tc.wait, dir, tc.args(dir)...); code == 0 {
					t.Errorf("exit 0 after %v", sig)
				}
			})
		}
	}
}

// TestSignalsTraceGenerateAndHeatmap: trace generate of 60 million
// requests (drawing them takes seconds, writing them more) and plot
// heatmap --exhaustive (thousands of simulations) stop soon after SIGINT
// or SIGTERM, say so, and leave no file. The signal goes while the
// requests are drawn (0.5 s), while they are written (the progress-free
// run reaches the write after 2–5 s here: 6 s), and during the search.
func TestSignalsTraceGenerateAndHeatmap(t *testing.T) {
	bin := buildBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		for _, tc := range []struct {
			name string
			wait time.Duration
			args func(dir string) []string
		}{
			{"trace_generate_drawing", 500 * time.Millisecond, func(dir string) []string {
				return []string{"trace", "generate", "--workload", "coding", "--rps", "3000", "--duration", "20000s", "--out", filepath.Join(dir, "trace.csv")}
			}},
			{"trace_generate_writing", 6 * time.Second, func(dir string) []string {
				return []string{"trace", "generate", "--workload", "coding", "--rps", "3000", "--duration", "20000s", "--out", filepath.Join(dir, "trace.csv")}
			}},
			{"plot_heatmap_exhaustive", 1500 * time.Millisecond, func(dir string) []string {
				return []string{"plot", "heatmap", "--design", "HH", "--goal", "cost", "--rps", "70", "--exhaustive", "--out", filepath.Join(dir, "heatmap.png")}
			}},
		} {
			t.Run(tc.name+"_"+sig.String(), func(t *testing.T) {
				dir := t.TempDir()
				// Each stops in well under a second on an idle machine.
				// The exhaustive heatmap took 10-12 s here while its
				// thousands of queued points each ran their setup after
				// the interrupt; now simulations asked of a cancelled
				// context return at once and the search starts no point
				// (search/exhaustive.go) once its context is done.
				if code := stopsCleanly(t, bin, sig, tc.wait, dir, tc.args(dir)...); code == 0 {
					t.Errorf("exit 0 after %v", sig)
				}
			})
		}
	}
}

// TestSignalsSweep: a sweep of two clusters at seven rates over an hour
// each (5 s on this shared machine) stops soon after SIGINT or SIGTERM,
// says so, and writes no --out file.
func TestSignalsSweep(t *testing.T) {
	bin := buildBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run("sweep_"+sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			code := stopsCleanly(t, bin, sig, time.Second, dir, "sweep", "--cluster", "HH:23:7", "--cluster", "Baseline-H100:58",
				"--rps", "20:140:20", "--duration", "3600s", "--out", filepath.Join(dir, "sweep.csv"))
			if code != 1 {
				t.Errorf("exit %d after %v, want 1", code, sig)
			}
		})
	}
}
