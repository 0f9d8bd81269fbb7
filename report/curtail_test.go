package report

import (
	"bytes"
	"strings"
	"testing"

	"splitplan/search"
	"splitplan/slo"
)

func TestCurtailmentLowest(t *testing.T) {
	t.Parallel()
	row := func(pass ...bool) CurtailRow {
		r := CurtailRow{Cluster: "X", RPS: 1, Pool: "token"}
		for i, p := range pass {
			r.Caps = append(r.Caps, 1-0.1*float64(i))
			r.PoolKW = append(r.PoolKW, 10-float64(i))
			r.Rows = append(r.Rows, search.LoadRow{Verdict: slo.Verdict{Pass: p, Drained: true}})
		}
		return r
	}
	for _, c := range []struct {
		pass      []bool
		ok, broke int
	}{
		{[]bool{true, true, false, true}, 1, 2}, // a pass below a failure does not count
		{[]bool{true, true, true}, 2, -1},
		{[]bool{false, true}, -1, 0},
	} {
		if ok, broke := row(c.pass...).lowest(); ok != c.ok || broke != c.broke {
			t.Errorf("%v: lowest %d, broke %d; want %d, %d", c.pass, ok, broke, c.ok, c.broke)
		}
	}
	var b bytes.Buffer
	PrintCurtailment(&b, []CurtailRow{row(true, false), row(false), row(true, true)})
	out := b.String()
	for _, want := range []string{"X        1      token  1 ", "fails at its own cap", "holds at every cap tried", "0.9: fails"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// TestCurtailmentVerified: a cap whose row met every SLO over its run but
// not over the longer check (search.VerifyLoad) is where the pool breaks,
// and the report says so with the check's figure.
func TestCurtailmentVerified(t *testing.T) {
	t.Parallel()
	r := CurtailRow{Cluster: "X", RPS: 1, Pool: "prompt", Caps: []float64{1, 0.9, 0.8}, PoolKW: []float64{10, 9, 8}}
	for range r.Caps {
		r.Rows = append(r.Rows, search.LoadRow{Verdict: slo.Verdict{Pass: true, Drained: true}})
	}
	r.Rows[0].Verified = &search.Verification{DurationS: 900, Pass: true}
	r.Rows[1].Verified = &search.Verification{DurationS: 900, StopLimit: "P99 TTFT", StopS: 610}
	if ok, broke := r.lowest(); ok != 0 || broke != 1 {
		t.Errorf("lowest %d, broke %d; want 0, 1 (the 0.9 cap fails its check)", ok, broke)
	}
	var b bytes.Buffer
	PrintCurtailment(&b, []CurtailRow{r})
	if want := "0.9: over 15m: P99 TTFT over its limit within 11m"; !strings.Contains(b.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, b.String())
	}
}
