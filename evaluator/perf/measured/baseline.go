package measured

import (
	"context"
	"math"
)

// fitBaseline fits, per engine of preds, the two-parameter roofline that
// CrossValidate reports beside the model: every iteration of a row's
// simulated schedule (the same schedules, the same disaggregated steady
// state) takes a × FLOPs / peak + b × bytes / bandwidth (the roofline's
// two sides added, each at the spec sheet's peak, no link, engine or
// serving time), so a and b are the inverse achieved fractions of peak.
// a and b minimise the same loss as Calibrate (fitErr, weighted, over the
// same rows), by Nelder–Mead in
// their logarithms. It returns (a, b) per engine.
func fitBaseline(ctx context.Context, preds []*rowPredictor) (map[Engine][2]float64, error) {
	by := map[Engine][]*rowPredictor{}
	for _, p := range preds {
		by[p.row.Engine] = append(by[p.row.Engine], p)
	}
	out := map[Engine][2]float64{}
	for e, rows := range by {
		sub, w := fitSubsample(rows, fitRowsEngine)
		x, err := minimize(ctx, func(x []float64) float64 {
			a, b := math.Exp(x[0]), math.Exp(x[1])
			var s float64
			for i, p := range sub {
				t, o := p.baseline(a, b)
				s += w[i] * fitErr(p.row, t, o)
			}
			return s
		}, []float64{math.Log(2), math.Log(1.25)}, baselineEvals)
		if err != nil {
			return nil, err
		}
		out[e] = [2]float64{math.Exp(x[0]), math.Exp(x[1])}
	}
	return out, nil
}
