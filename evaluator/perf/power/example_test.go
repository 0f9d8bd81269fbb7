package power_test

import (
	"fmt"

	"splitplan/arch"
	"splitplan/costpower"
	"splitplan/evaluator/perf/power"
	"splitplan/hw"
	"splitplan/resolve"
)

// A DGX-H100 serving Llama2-70B with its GPUs capped at half their board
// power: the draw while idle and during a decode iteration, the capped
// iteration model, and the provisioned power.
func ExampleForReplica() {
	mc, _ := costpower.Default().Machine("DGX-H100")
	g, _ := hw.Lookup("h100_sxm")
	a, _ := arch.Lookup("llama2-70b")
	eff := power.ProfileEfficiency(g.Name)
	pm, err := power.ForReplica(resolve.PowerReplica(mc, g, 0.5), a, arch.BF16, eff)
	if err != nil {
		fmt.Println(err)
		return
	}
	an := pm.Analytic() // stands in for the machine's perf.IterationModel here
	capped, _ := power.NewCapped(an, an, power.BuiltinCap, 1, 0.5)
	s, _ := capped.DecodeTime(32, 32*1024)
	p, _ := capped.PromptTime(4096)
	u, _ := an.PromptTime(4096)
	kw, _ := power.ProvisionedKW(mc.PowerKW, mc.GPUPowerCap, 0.5)
	fmt.Println(pm.Provenance().Kind)
	fmt.Printf("idle %.0f W, decode of 32 requests %.0f W for %.1f ms\n", pm.IdleW(), pm.IterationW(0, 32, 32*1024, s), s*1e3)
	fmt.Printf("4096-token prompt %.0f ms capped, %.0f ms uncapped\n", p*1e3, u*1e3)
	fmt.Printf("provisioned %.2f kW\n", kw)
	// Output:
	// profiled
	// idle 978 W, decode of 32 requests 2747 W for 13.0 ms
	// 4096-token prompt 247 ms capped, 197 ms uncapped
	// provisioned 8.00 kW
}
