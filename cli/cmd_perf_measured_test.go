package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestLineProgress: a long run's progress shows on a terminal, from the first
// second on, as one rewritten line that done clears; off a terminal it
// prints nothing at all.
func TestLineProgress(t *testing.T) {
	var quiet bytes.Buffer
	p := newLineProgress(&quiet, "perf calibrate")
	p.start = time.Now().Add(-5 * time.Second)
	p.update("fitting vllm", 1, 8)
	p.done()
	if quiet.Len() != 0 {
		t.Errorf("not a terminal: printed %q", quiet.String())
	}
	var term bytes.Buffer
	p = newLineProgress(&term, "perf calibrate")
	p.terminal = true
	p.update("simulating the benchmarks' schedules", 0, 100) // within the first second: nothing
	if term.Len() != 0 {
		t.Errorf("within the first second: printed %q", term.String())
	}
	p.start = time.Now().Add(-3 * time.Second)
	p.update("fitting vllm", 1, 8)
	p.update("fitting sglang", 2, 8) // within 100 ms of the last line: skipped
	p.done()
	got := term.String()
	if !strings.Contains(got, "\r\033[Kperf calibrate: 3s, fitting vllm (1/8)") || strings.Contains(got, "sglang") || !strings.HasSuffix(got, "\r\033[K") {
		t.Errorf("terminal progress %q", got)
	}
}
