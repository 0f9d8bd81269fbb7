package cli

import (
	"context"
	"slices"

	"splitplan/evaluator"
	"splitplan/report"
	"splitplan/resolve"
)

// curtail runs evaluate's curtailment report: every pool of every cluster
// at every rate, under each cap of caps (descending; the pool's own cap
// first, the other pool at its own), simulated on the evaluate workload.
func (ld *loadRun) curtail(ctx context.Context, src resolve.Source, caps []float64) ([]report.CurtailRow, error) {
	desc := slices.Clone(caps)
	slices.Reverse(desc)
	type job struct {
		cl   int
		pool evaluator.Pool
	}
	var jobs []job
	var clusters []resolve.Cluster
	var kws [][]float64
	for i, cl := range ld.Clusters {
		pools := []evaluator.Pool{evaluator.PoolPrompt, evaluator.PoolToken}
		if cl.Design.IsBaseline() {
			pools = []evaluator.Pool{evaluator.PoolBaseline}
		}
		for _, p := range pools {
			jobs = append(jobs, job{i, p})
			kw := make([]float64, len(desc))
			for k, c := range desc {
				v, err := resolve.WithPoolCap(cl, src.WithCompat(ld.Options.Compat), p, c)
				if err != nil {
					return nil, badInputf("--power-caps: %s %s pool at %g: %v", cl, p, c, err)
				}
				v.PolicyInName = cl.PolicyInName
				clusters = append(clusters, v)
				n := v.Prompt
				mc := v.PromptType
				switch p {
				case evaluator.PoolToken:
					n, mc = v.Token, v.TokenType
				case evaluator.PoolBaseline:
					n = v.Prompt + v.Token
				}
				kw[k] = float64(n) * mc.PowerKW
			}
			kws = append(kws, kw)
		}
	}
	sub := *ld
	sub.Clusters = clusters
	rows, err := sub.simulate(ctx)
	if err != nil {
		return nil, err
	}
	var out []report.CurtailRow
	nr := len(ld.Rates)
	for j, jb := range jobs {
		for ri, rate := range ld.Rates {
			r := report.CurtailRow{Cluster: ld.Clusters[jb.cl].String(), RPS: rate, Pool: jb.pool.String(), Caps: desc, PoolKW: kws[j]}
			for k := range desc {
				r.Rows = append(r.Rows, rows[(j*len(desc)+k)*nr+ri])
			}
			out = append(out, r)
		}
	}
	return out, nil
}
