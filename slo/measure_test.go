package slo

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"splitplan/evaluator"
)

func TestMetricText(t *testing.T) {
	t.Parallel()
	for _, m := range Metrics() {
		b, err := m.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Metric
		if err := back.UnmarshalText(b); err != nil || back != m {
			t.Errorf("%v: round trip gives %v, %v", m, back, err)
		}
	}
	if m, err := ParseMetric(" TBT "); err != nil || m != TBT {
		t.Errorf("ParseMetric(TBT) = %v, %v", m, err)
	}
	var m Metric
	err := m.UnmarshalText([]byte("ttlt"))
	if err == nil || !strings.Contains(err.Error(), `"ttlt"`) || !strings.Contains(err.Error(), "ttft, tbt (or tpot), e2e, itl, stall or queue") {
		t.Errorf("bad metric: %v, want the name and the metrics listed", err)
	}
	if _, err := Metric(0).MarshalText(); err == nil {
		t.Error("the zero metric marshals")
	}
	// In a document, a target's metric reads and writes as its name.
	js, err := json.Marshal(Target{Metric: E2E, Percentile: 90, Factor: 2})
	if err != nil || !strings.Contains(string(js), `"Metric":"e2e"`) {
		t.Errorf("json %s, %v", js, err)
	}
	var tg Target
	if err := json.Unmarshal([]byte(`{"Metric":"tbt","Percentile":99,"Factor":5}`), &tg); err != nil || tg.Key() != "tbt_p99" {
		t.Errorf("unmarshal: %+v, %v", tg, err)
	}
}

// ramp is ten requests of 100 prompt / 11 output tokens (reference TTFT
// 0.1 s, TBT 0.01 s, E2E 0.2 s) with slowdowns 1..10.
func ramp() *evaluator.Result {
	res := &evaluator.Result{}
	for i := 1; i <= 10; i++ {
		k := float64(i)
		res.Requests = append(res.Requests, evaluator.RequestResult{
			ID: i - 1, ArrivalS: k, PromptTokens: 100, OutputTokens: 11,
			TTFTS: 0.1 * k, TBTS: 0.01 * k, E2ES: 0.2 * k, TBTReferenceS: 0.01 * k * 10 / 11,
		})
	}
	return res
}

func TestMeasureJudge(t *testing.T) {
	t.Parallel()
	res, ref := ramp(), Reference{Perf: flat{}}
	m := Measure(res, ref)
	for _, c := range []struct {
		metric Metric
		scale  Scale
		p      float64
		want   float64
	}{
		{TTFT, Slowdown, 50, 5.5}, {TTFT, Seconds, 50, 0.55}, {TBT, Seconds, 90, 0.091},
		{E2E, Slowdown, 99, 9.91}, {E2E, Seconds, 100, 2},
	} {
		if got := m.Percentile(c.metric, c.scale, c.p); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("P%g %v %v = %v, want %v", c.p, c.metric, c.scale, got, c.want)
		}
	}
	// Only the series asked for are measured.
	only := Measure(res, ref, Series{TBT, Seconds})
	if !math.IsNaN(only.Percentile(TTFT, Seconds, 50)) || only.Percentile(TBT, Seconds, 50) != m.Percentile(TBT, Seconds, 50) {
		t.Errorf("partial measurements: TTFT %v, TBT %v", only.Percentile(TTFT, Seconds, 50), only.Percentile(TBT, Seconds, 50))
	}
	// Judge on every series and on the spec's own agree with Check.
	spec := Default()
	spec.Targets[5].AbsoluteS = 0.2
	want := spec.Check(res, ref)
	for _, got := range []Verdict{spec.Judge(m), spec.Judge(Measure(res, ref, spec.Series()...))} {
		if len(got.Figures) != len(want.Figures) || got.Pass != want.Pass || got.Binding != want.Binding {
			t.Fatalf("Judge %+v, Check %+v", got, want)
		}
		for i := range got.Figures {
			if got.Figures[i] != want.Figures[i] {
				t.Errorf("figure %d: Judge %+v, Check %+v", i, got.Figures[i], want.Figures[i])
			}
		}
	}
	// A target whose series was not measured fails rather than passing.
	if v := spec.Judge(only); v.Pass || !math.IsNaN(v.Figures[0].Measured) {
		t.Errorf("judging without the series: %+v", v.Figures[0])
	}
	if got := len(spec.Series()); got != 4 {
		t.Errorf("the spec reads %d series, want 4 (three slowdowns and TBT in seconds)", got)
	}
}

func TestDrained(t *testing.T) {
	t.Parallel()
	res := &evaluator.Result{}
	for i := 0; i < 40; i++ {
		res.Requests = append(res.Requests, evaluator.RequestResult{ID: i, SchedDelayS: float64(i) / 4})
	}
	// First half median 2.375 s, last tenth 9.375 s: a rise of 7 s.
	if ok, note := Drained(res, 2); ok || !strings.Contains(note, "queues grow") {
		t.Errorf("rise of 7 s within 2 s: %v %q", ok, note)
	}
	if ok, note := Drained(res, 8); !ok || note != "" {
		t.Errorf("rise of 7 s within 8 s: %v %q", ok, note)
	}
	res.Aborted, res.AbortReason = true, "waited too long"
	if ok, note := Drained(res, 8); ok || note != "waited too long" {
		t.Errorf("aborted: %v %q", ok, note)
	}
}
