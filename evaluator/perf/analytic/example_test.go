package analytic_test

import (
	"fmt"

	"splitplan/arch"
	"splitplan/evaluator/perf/analytic"
	"splitplan/hw"
)

// A model for Llama-3.1-70B in fp8 on four H200s, with the default
// efficiencies: a decode iteration of 32 requests at 2,000 tokens of
// context each, a 4,096-token prompt, and how many tokens of KV cache fit.
func Example() {
	a, err := arch.Lookup("meta-llama/Llama-3.1-70B")
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := hw.Lookup("h200")
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := analytic.New(analytic.Config{Arch: a, GPU: g, TP: 4, Weights: arch.FP8, KV: arch.FP8, Eff: analytic.DefaultEfficiency})
	if err != nil {
		fmt.Println(err)
		return
	}
	d, _ := m.DecodeTime(32, 32*2000)
	p, _ := m.PromptTime(4096)
	fmt.Printf("decode %.1f ms, prompt %.0f ms, KV capacity %.2fM tokens\n", 1000*d, 1000*p, float64(m.KVCapacityTokens())/1e6)
	// Output:
	// decode 16.2 ms, prompt 177 ms, KV capacity 2.83M tokens
}
