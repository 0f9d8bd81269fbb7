package evaluator_test

import (
	"fmt"
	"splitplan/resolve"

	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/traces"
)

// Simulate three requests on a Splitwise-HH cluster of one prompt and one
// token machine serving BLOOM-176B.
func ExampleEvaluate() {
	cl, err := resolve.NamedCluster(costpower.Default(), builtin(false), "Splitwise-HH", 1, 1, "bloom-176b")
	if err != nil {
		fmt.Println(err)
		return
	}
	reqs := []traces.Request{
		{ID: 0, Arrival: 0, PromptTokens: 1500, OutputTokens: 20},
		{ID: 1, Arrival: 0.05, PromptTokens: 300, OutputTokens: 200},
		{ID: 2, Arrival: 1, PromptTokens: 4000, OutputTokens: 1},
	}
	res, err := evaluator.Evaluate(cl.Sim(), reqs, evaluator.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %d of %d requests done at %.3f s\n", cl, res.Completed, len(reqs), res.EndS)
	for _, r := range res.Requests {
		fmt.Printf("request %d: TTFT %.3f s, E2E %.3f s\n", r.ID, r.TTFTS, r.E2ES)
	}
	// Output:
	// Splitwise-HH 1P/1T: 3 of 3 requests done at 7.493 s
	// request 0: TTFT 0.185 s, E2E 0.891 s
	// request 1: TTFT 0.190 s, E2E 7.443 s
	// request 2: TTFT 0.638 s, E2E 0.638 s
}
