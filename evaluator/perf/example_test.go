package perf_test

import (
	"fmt"

	"splitplan/evaluator/perf"
)

// The simulator's view: look up a built-in pair and ask its model for
// iteration times in seconds.
func ExampleBuiltin() {
	pair, err := perf.Builtin().Lookup("bloom-176b", "h100-80gb", 8)
	if err != nil {
		fmt.Println(err)
		return
	}
	ref := pair.CompatModel() // SplitwiseSim compatibility
	prompt, _ := ref.PromptTime(1000)
	decode, extrapolated := ref.DecodeTime(1, 1000)
	mixed, _ := ref.MixedTime(500, 1, 1500)
	fmt.Printf("prompt(1000) = %.6f s\n", prompt)
	fmt.Printf("decode(1) = %.6f s (extrapolated: %v)\n", decode, extrapolated)
	fmt.Printf("mixed(500 + 1) = %.6f s\n", mixed)
	// Output:
	// prompt(1000) = 0.129588 s
	// decode(1) = 0.035327 s (extrapolated: true)
	// mixed(500 + 1) = 0.082576 s
}

// Fit a profile and write the pairs as [[perf]] tables.
func ExampleFit() {
	rows := []perf.ProfileRow{
		{Model: "m", Hardware: "gpu", TP: 8, PromptSize: 512, BatchSize: 1, TokenSize: 128, PromptTime: 0.1, TokenTime: 0.03},
		{Model: "m", Hardware: "gpu", TP: 8, PromptSize: 512, BatchSize: 2, TokenSize: 128, PromptTime: 0.18, TokenTime: 0.032},
	}
	pairs, err := perf.Fit(rows, perf.DefaultMixedPenalty)
	if err != nil {
		fmt.Println(err)
		return
	}
	d, _ := pairs[0].Model().DecodeTime(2, 2*576)
	fmt.Printf("%s: decode(2) = %.3f s\n", pairs[0].Name(), d)
	// Output:
	// m/gpu/tp8: decode(2) = 0.032 s
}
