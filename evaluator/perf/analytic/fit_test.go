package analytic

import (
	"os"
	"testing"

	"splitplan/evaluator/perf"
	"splitplan/evaluator/perf/arch"
	"splitplan/evaluator/perf/hw"
)

const profilePath = "../../../../shared/data/splitwise-profiles/perf_model.csv"

// profileSamples returns the samples of the profile rows on hardware
// (both models), with the inconsistent ones dropped, and how many were.
func profileSamples(t *testing.T, hardware string) ([]Sample, int) {
	t.Helper()
	if _, err := os.Stat(profilePath); err != nil {
		t.Skip("shared data absent:", err)
	}
	rows, err := perf.ReadProfileFile(profilePath)
	if err != nil {
		t.Fatal(err)
	}
	var all []Sample
	for _, name := range []string{"bloom-176b", "llama2-70b"} {
		a, err := arch.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		var sel []perf.ProfileRow
		for _, r := range rows {
			if r.Hardware == hardware && arch.ShortName(r.Model) == name {
				sel = append(sel, r)
			}
		}
		s, err := SamplesFromProfile(sel, a)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, s...)
	}
	kept, dropped := DropInconsistent(all)
	return kept, dropped
}

func mustGPU(t testing.TB, name string) hw.GPU {
	g, err := hw.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestA100ToH100 is issue 10's acceptance test: efficiencies fitted on the
// A100 profile rows (both models, all TPs) predict the H100 rows (held
// out: another GPU, its spec sheet only) within 10% MAPE on prompt and on
// token time separately.
func TestA100ToH100(t *testing.T) {
	train, droppedA := profileSamples(t, "a100-80gb")
	test, droppedH := profileSamples(t, "h100-80gb")
	a100, h100 := mustGPU(t, "a100"), mustGPU(t, "h100")
	eff, err := Fit(train, a100, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fitted on A100: %+v (dropped %d A100, %d H100 inconsistent samples)", eff, droppedA, droppedH)
	for _, k := range []Kind{PromptIteration, DecodeIteration} {
		in, n, err := MAPE(train, a100, eff, k, FitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out, m, err := MAPE(test, h100, eff, k, FitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: in-sample A100 MAPE %.1f%% (%d samples); held-out H100 MAPE %.1f%% (%d samples)", k, in, n, out, m)
		if out > 10 {
			t.Errorf("%s: held-out H100 MAPE %.1f%% > 10%%", k, out)
		}
	}
}
