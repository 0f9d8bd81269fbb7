package measured

import (
	"fmt"
	"sort"
	"strings"

	"splitplan/evaluator/perf"
	"splitplan/evaluator/perf/analytic"
	"splitplan/hw"
)

// profileGPUs maps the profiles' hardware names to GPU specs; power-capped
// hardware is left out (the analytic model does not model caps).
var profileGPUs = map[string]string{"a100-80gb": "a100_sxm", "h100-80gb": "h100_sxm"}

// CalibrateProfile fits, for every GPU of the profile rows that cal has no
// entry of, the analytic model's efficiencies on its iteration times (all
// models and tensor parallelisms of the profile together) and adds them to
// cal under the vllm engine, the one the simulator uses by default. The
// entries' MAPEs are then the in-sample errors of prompt and decode
// iterations (in the TTFT and TPOT fields). It returns the entries added.
func CalibrateProfile(cal *Calibration, rows []perf.ProfileRow) ([]Entry, error) {
	// The profile's hardware with a GPU spec the calibration lacks, by spec.
	hardware := map[string]string{}
	for _, r := range rows {
		hwName := strings.ToLower(r.Hardware)
		g, ok := profileGPUs[hwName]
		if !ok {
			continue
		}
		if _, prov := cal.Lookup(g, VLLM); prov != Calibrated {
			hardware[g] = hwName
		}
	}
	gpus := make([]string, 0, len(hardware))
	for g := range hardware {
		gpus = append(gpus, g)
	}
	sort.Strings(gpus)
	var added []Entry
	for _, g := range gpus {
		spec, err := hw.Lookup(g)
		if err != nil {
			return nil, err
		}
		samples, _, err := analytic.ProfileSamples(rows, hardware[g])
		if err != nil {
			return nil, err
		}
		eff, err := analytic.Fit(samples, spec, analytic.FitOptions{})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", g, err)
		}
		pm, _, err := analytic.MAPE(samples, spec, eff, analytic.PromptIteration, analytic.FitOptions{})
		if err != nil {
			return nil, err
		}
		dm, _, err := analytic.MAPE(samples, spec, eff, analytic.DecodeIteration, analytic.FitOptions{})
		if err != nil {
			return nil, err
		}
		e := Entry{GPU: g, Engine: VLLM, Efficiency: eff, Rows: len(samples) / 2, MAPETTFT: pm, MAPETPOT: dm, FromProfile: true}
		cal.Entries = append(cal.Entries, e)
		added = append(added, e)
	}
	return added, cal.Validate()
}
