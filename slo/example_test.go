package slo_test

import (
	"fmt"
	"splitplan/resolve"

	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/slo"
	"splitplan/traces"
)

// Check a short simulation against the Splitwise SLOs, with P99 TBT
// bounded at 0.2 s instead of as a slowdown, then read percentiles from
// the same measurements.
func Example() {
	cat, tab := costpower.Default(), resolve.DefaultSource()
	cl, err := resolve.NewCluster(cat, tab, "Splitwise-HH", 1, 1, "bloom-176b")
	if err != nil {
		fmt.Println(err)
		return
	}
	var reqs []traces.Request
	for i := range 30 {
		reqs = append(reqs, traces.Request{ID: i, Arrival: float64(i) * 0.5, PromptTokens: 200 + 50*(i%7), OutputTokens: 10 + 5*(i%5)})
	}
	res, err := evaluator.Evaluate(cl, reqs, evaluator.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The reference: each request alone on a DGX-A100.
	a100, _ := cat.Machine("DGX-A100")
	pair, err := tab.Table.Lookup("bloom-176b", a100.PerfHardware, a100.TensorParallel)
	if err != nil {
		fmt.Println(err)
		return
	}
	ref := slo.Reference{Perf: pair.Model(false)}

	spec := slo.Default()
	for i, t := range spec.Targets {
		if t.Key() == "tbt_p99" {
			spec.Targets[i].AbsoluteS = 0.2
		}
	}
	m := slo.Measure(res, ref, spec.Series()...)
	v := spec.Judge(m) // the same as spec.Check(res, ref)
	b := v.BindingFigure()
	fmt.Printf("pass %v, drained %v; binding %s: %.3f against %g\n", v.Pass, v.Drained, b.Name(), b.Measured, b.Limit)
	fmt.Printf("P99 TBT %.3f s, P50 TTFT slowdown %.2f\n", m.Percentile(slo.TBT, slo.Seconds, 99), m.Percentile(slo.TTFT, slo.Slowdown, 50))
	// Output:
	// pass true, drained true; binding P50 TBT: 0.795 against 1.25
	// P99 TBT 0.045 s, P50 TTFT slowdown 0.47
}
