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
