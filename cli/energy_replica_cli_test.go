package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestEnergyPerTPWithinPhysics is issue 29.1's example: `optimize --goal
// energy --rps 20 --model llama3.1-8b --gpus h100` sizes one DGX-H100 at
// every tensor parallelism, and its energy must be what one node's eight
// 700 W GPUs can draw: at most 8 × 0.7 kW × 24 h = 134.4 kWh a day, at
// least their idle draw, and within a factor of the TP-8 node's (the same
// GPUs serving the same load), not 8/TP − 1 nodes' idle draw above it.
// The SLOs are absolute: under the paper's slowdowns against a DGX-A100
// (which serves the 8B model at TP 8), TP 1 and 2 miss the P50 TBT at any
// load with the kernel physics, so the example would have no tp1 answer.
func TestEnergyPerTPWithinPhysics(t *testing.T) {
	code, out, errs := runCLI(t, "optimize", "--goal", "energy", "--rps", "20", "--model", "llama3.1-8b", "--gpus", "h100", "--format", "json",
		"--slo-abs", "tbt_p50=0.05,tbt_p90=0.1,tbt_p99=0.2,ttft_p50=1,ttft_p90=2,ttft_p99=5,e2e_p50=30,e2e_p90=60,e2e_p99=120")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res struct {
		Designs []struct {
			Design         string   `json:"design"`
			Found          bool     `json:"found"`
			PromptMachines int      `json:"prompt_machines"`
			TokenMachines  int      `json:"token_machines"`
			KWhPerDay      *float64 `json:"kwh_per_day"`
		} `json:"designs"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	const nodeMaxKWh = 8 * 0.7 * 24
	byTP := map[string]float64{}
	for _, d := range res.Designs {
		if !strings.HasPrefix(d.Design, "Baseline H100·tp") || !d.Found {
			continue
		}
		if d.KWhPerDay == nil {
			t.Fatalf("%s: no energy", d.Design)
		}
		nodes := d.PromptMachines + d.TokenMachines
		if e := *d.KWhPerDay; e > float64(nodes)*nodeMaxKWh || e <= 0 {
			t.Errorf("%s on %d node(s): %.1f kWh/day, outside (0, %.1f] (eight 700 W GPUs a node)", d.Design, nodes, e, float64(nodes)*nodeMaxKWh)
		}
		if nodes == 1 {
			byTP[strings.TrimPrefix(d.Design, "Baseline H100·")] = *d.KWhPerDay
		}
	}
	if len(byTP) != 4 {
		t.Fatalf("want one node at tp1, tp2, tp4 and tp8, got %v", byTP)
	}
	for _, tp := range []string{"tp1", "tp2", "tp4"} {
		// One node's idle draw is about 37 kWh/day: billed per replica it
		// was 8/TP − 1 times that above tp8.
		if r := byTP[tp] / byTP["tp8"]; r > 1.6 {
			t.Errorf("%s: %.1f kWh/day, %.2f× the same node at tp8 (%.1f): the replicas bill more GPUs than the node has", tp, byTP[tp], r, byTP["tp8"])
		}
	}
	t.Logf("kWh/day by TP on one DGX-H100: %v", byTP)
}
