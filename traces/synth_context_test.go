package traces

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"
)

// TestSynthesizeContext: with a live context it returns Synthesize's
// requests and reports progress in order; cancelled, it stops with the
// context's error and no requests.
func TestSynthesizeContext(t *testing.T) {
	t.Parallel()
	d, err := Builtin("coding")
	if err != nil {
		t.Fatal(err)
	}
	want, err := Synthesize(d, 500, 600, 3, false)
	if err != nil {
		t.Fatal(err)
	}
	var seen []int
	got, err := SynthesizeContext(context.Background(), d, 500, 600, 3, false, func(n int) { seen = append(seen, n) })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("SynthesizeContext drew %d requests, Synthesize %d (or other sizes)", len(got), len(want))
	}
	if len(seen) != len(want)/synthCheck {
		t.Errorf("progress called %d times for %d requests, want %d", len(seen), len(want), len(want)/synthCheck)
	}
	for i, n := range seen {
		if n != (i+1)*synthCheck-1 {
			t.Errorf("progress %d: %d requests drawn, want %d", i, n, (i+1)*synthCheck-1)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	reqs, err := SynthesizeContext(ctx, d, 500, 600, 3, false, func(int) {
		calls++
		cancel()
	})
	if !errors.Is(err, context.Canceled) || reqs != nil || calls != 1 {
		t.Errorf("cancelled at the first progress: %d requests, error %v, %d progress calls", len(reqs), err, calls)
	}
}

// failAfter accepts n writes, then fails every one.
type failAfter struct{ n, writes int }

func (f *failAfter) Write(p []byte) (int, error) {
	f.writes++
	if f.writes > f.n {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

// TestWriteStopsAtFailedWrite: both writers return the first failed
// write's error instead of formatting the rest of the trace.
func TestWriteStopsAtFailedWrite(t *testing.T) {
	t.Parallel()
	d, err := Builtin("coding")
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := Synthesize(d, 500, 600, 3, false)
	if err != nil {
		t.Fatal(err)
	}
	for name, write := range map[string]func(*failAfter) error{
		"splitwise": func(w *failAfter) error { return WriteSplitwise(w, reqs) },
		"azure":     func(w *failAfter) error { return WriteAzure(w, reqs, time.Date(2023, 11, 16, 18, 17, 3, 0, time.UTC)) },
	} {
		w := &failAfter{n: 2}
		if err := write(w); err == nil || err.Error() != "disk full" {
			t.Errorf("%s: error %v, want the writer's", name, err)
		}
		if w.writes != 3 {
			t.Errorf("%s: %d writes, want 3 (two, then the failed one)", name, w.writes)
		}
	}
}
