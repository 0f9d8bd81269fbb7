package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// failingWriter fails every write, as standard output on a full disk does.
type failingWriter struct{ writes int }

func (f *failingWriter) Write(p []byte) (int, error) {
	f.writes++
	return 0, errors.New("no space left on device")
}

// TestStdoutWriteErrorExits1: every command whose standard output fails
// exits 1 and says so on stderr, whether it printed its report with
// fmt.Fprint (whose errors commands ignore) or wrote an output file "-".
func TestStdoutWriteErrorExits1(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.csv")
	if code, _, errs := runCLI(t, "trace", "generate", "--workload", "coding", "--rps", "2", "--duration", "20s", "--out", trace); code != 0 {
		t.Fatalf("trace generate: exit %d: %s", code, errs)
	}
	optima := filepath.Join(dir, "optima.csv")
	if code, _, errs := runCLI(t, "optimize", "--goal", "cost", "--rps", "5", "--duration", "60s", "--designs", "Baseline-H100", "--out", optima); code != 0 {
		t.Fatalf("optimize: exit %d: %s", code, errs)
	}
	for _, args := range [][]string{
		{"catalog"},
		{"--help"},
		{"perf", "query", "--hardware", "h100", "--model", "llama3.1-8b", "--tp", "1", "--decode-batch", "8"},
		{"trace", "stats", "--workload", "coding"},
		{"trace", "stats", "--trace", trace},
		{"trace", "generate", "--workload", "coding", "--rps", "2", "--duration", "20s", "--out", "-"},
		{"simulate", "--design", "HH", "--prompt", "2", "--token", "1", "--rps", "2", "--duration", "20s"},
		{"simulate", "--design", "HH", "--prompt", "2", "--token", "1", "--rps", "2", "--duration", "20s", "--out", "-"},
		{"optimize", "--goal", "cost", "--rps", "5", "--duration", "60s", "--designs", "Baseline-H100"},
		{"sweep", "--cluster", "HH:2:1", "--rps", "2:4:2", "--duration", "20s"},
		{"evaluate", "--from", optima, "--rps", "5", "--duration", "20s"},
	} {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			var fw failingWriter
			var errb strings.Builder
			code := run(append([]string{"splitplan"}, args...), &fw, &errb)
			if fw.writes == 0 {
				t.Fatalf("the command wrote nothing to standard output (exit %d, stderr %q): the case tests nothing", code, errb.String())
			}
			if code != 1 || !strings.Contains(errb.String(), "standard output") || !strings.Contains(errb.String(), "no space left") {
				t.Errorf("exit %d, stderr %q; want 1 and a message about standard output", code, errb.String())
			}
		})
	}
}

// TestStdoutDevFull runs the binary with its standard output on /dev/full.
func TestStdoutDevFull(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/dev/full is Linux's")
	}
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	bin := buildBinary(t)
	for _, args := range [][]string{
		{"catalog"},
		{"perf", "query", "--hardware", "h100", "--model", "llama3.1-8b", "--tp", "1", "--decode-batch", "8"},
		{"simulate", "--design", "HH", "--prompt", "2", "--token", "1", "--rps", "2", "--duration", "20s"},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Stdout = full
		var errb strings.Builder
		cmd.Stderr = &errb
		err := cmd.Run()
		code := cmd.ProcessState.ExitCode()
		if err == nil || code != 1 || !strings.Contains(errb.String(), "standard output") {
			t.Errorf("%v > /dev/full: exit %d (%v), stderr %q; want 1 and a message", args, code, err, errb.String())
		}
	}
}
