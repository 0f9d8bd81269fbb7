package report

import (
	"fmt"
	"strings"

	"splitplan/costpower"
	"splitplan/memory"
)

// MemoryText says what the memory model assumed for model on the machine
// types given (each named once): the precision of the weights and of the
// KV cache, the engine's share of GPU memory, and per machine type the
// weights per GPU and the KV-cache tokens per replica.
func MemoryText(model costpower.Model, machines ...costpower.Machine) string {
	p := model.ServedPrecision()
	var per []string
	seen := map[string]bool{}
	util := 0.0
	for _, mc := range machines {
		if seen[mc.Name] {
			continue
		}
		seen[mc.Name] = true
		if util == 0 || mc.GPUMemoryUtilization != 0 {
			util = mc.GPUMemoryUtilization
		}
		b, err := model.Memory(mc.Instance())
		if err != nil {
			per = append(per, fmt.Sprintf("%s: weights do not fit", mc.Label()))
			continue
		}
		per = append(per, fmt.Sprintf("%s %.1f GiB weights/GPU, %d KV tokens per replica", mc.Label(), b.Weights/memory.GiB, b.Tokens))
	}
	if util == 0 {
		util = memory.DefaultUtilization
	}
	s := fmt.Sprintf("%s weights, %s KV cache, %.0f%% of GPU memory to the engine", p, p.KVCache(), 100*util)
	if len(per) > 0 && len(per) <= 4 {
		s += ": " + strings.Join(per, "; ")
	}
	return s
}

// ReferenceMemoryText says what --compat splitwise-sim assumes of model's
// memory instead of MemoryText: the reference simulator's rule.
func ReferenceMemoryText(model costpower.Model) string {
	return fmt.Sprintf("%s weights; KV cache = all GPU memory − weights (the reference simulator's rule)", model.ServedPrecision())
}
