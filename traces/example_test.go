package traces_test

import (
	"fmt"

	"splitplan/traces"
)

// Synthesize a two-minute coding workload at 70 requests per second, with
// (prompt, output) sizes resampled as pairs from the embedded Azure trace.
func ExampleSynthesize() {
	d, err := traces.Builtin("coding")
	if err != nil {
		panic(err)
	}
	reqs, err := traces.Synthesize(d, 70, 120, 1, false)
	if err != nil {
		panic(err)
	}
	s := traces.Summarize(reqs)
	// 70 × 120 = 8400 requests expected; Poisson counts vary by √8400 ≈ 92.
	fmt.Printf("within 3σ of 8400 requests: %v\n", s.Requests > 8400-275 && s.Requests < 8400+275)
	fmt.Printf("first arrives in the first second: %v\n", reqs[0].Arrival < 1)
	fmt.Printf("all before 120 s: %v\n", reqs[len(reqs)-1].Arrival < 120)
	// Output:
	// within 3σ of 8400 requests: true
	// first arrives in the first second: true
	// all before 120 s: true
}
