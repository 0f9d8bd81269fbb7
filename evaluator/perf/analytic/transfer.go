package analytic

import (
	"fmt"
	"sort"
	"strings"

	"splitplan/arch"
	"splitplan/evaluator/perf"
	"splitplan/hw"
)

// ProfileSamples turns the consistent profile rows of one hardware (every
// model and tensor parallelism of it) into samples; dropped counts the
// rows DropInconsistent left out.
func ProfileSamples(rows []perf.ProfileRow, hardware string) (samples []Sample, dropped int, err error) {
	byModel := map[string][]perf.ProfileRow{}
	for _, r := range rows {
		if strings.EqualFold(r.Hardware, hardware) {
			byModel[arch.ShortName(r.Model)] = append(byModel[arch.ShortName(r.Model)], r)
		}
	}
	if len(byModel) == 0 {
		return nil, 0, fmt.Errorf("analytic: no profile rows of hardware %s", hardware)
	}
	names := make([]string, 0, len(byModel))
	for m := range byModel {
		names = append(names, m)
	}
	sort.Strings(names)
	for _, m := range names {
		a, err := arch.Lookup(m)
		if err != nil {
			return nil, 0, err
		}
		kept, d := DropInconsistent(byModel[m])
		dropped += d
		s, err := SamplesFromProfile(kept, a)
		if err != nil {
			return nil, 0, err
		}
		samples = append(samples, s...)
	}
	return samples, dropped, nil
}

// TransferResult is the analytic model fitted on one GPU's profile rows
// and judged on another GPU's, which the fit never saw.
type TransferResult struct {
	From, To string
	// Eff are the efficiencies fitted on From.
	Eff Efficiency
	// InPromptMAPE and InDecodeMAPE are the in-sample errors on From;
	// PromptMAPE and DecodeMAPE the held-out errors on To (percent).
	InPromptMAPE, InDecodeMAPE, PromptMAPE, DecodeMAPE float64
	// Samples is the number of held-out iterations of each kind.
	Samples int
}

// Transfer fits the efficiencies on the profile rows of hardware from (GPU
// spec fromGPU) and predicts the rows of hardware to (spec toGPU) with
// them carried to toGPU (Efficiency.CarriedTo).
func Transfer(rows []perf.ProfileRow, from, to string, fromGPU, toGPU hw.GPU) (TransferResult, error) {
	train, _, err := ProfileSamples(rows, from)
	if err != nil {
		return TransferResult{}, err
	}
	test, _, err := ProfileSamples(rows, to)
	if err != nil {
		return TransferResult{}, err
	}
	eff, err := Fit(train, fromGPU, FitOptions{})
	if err != nil {
		return TransferResult{}, err
	}
	res := TransferResult{From: from, To: to, Eff: eff}
	carried := eff.CarriedTo(fromGPU, toGPU)
	for _, c := range []struct {
		kind    Kind
		in, out *float64
	}{{PromptIteration, &res.InPromptMAPE, &res.PromptMAPE}, {DecodeIteration, &res.InDecodeMAPE, &res.DecodeMAPE}} {
		if *c.in, _, err = MAPE(train, fromGPU, eff, c.kind, FitOptions{}); err != nil {
			return TransferResult{}, err
		}
		if *c.out, res.Samples, err = MAPE(test, toGPU, carried, c.kind, FitOptions{}); err != nil {
			return TransferResult{}, err
		}
	}
	return res, nil
}
