package analytic

import (
	"splitplan/arch"
	"splitplan/hw"
	"splitplan/memory"
)

// DefaultReserveFraction is the share of each GPU's memory the serving
// engine leaves alone: 1 − memory.DefaultUtilization (vLLM's default
// gpu_memory_utilization of 0.9 leaves 10%).
const DefaultReserveFraction = 1 - memory.DefaultUtilization

// KVCapacityTokens returns the tokens of KV cache that fit on a tp-way
// group of GPUs g serving a at the given weight and KV precisions, as the
// one memory model (package memory) gives them with an engine memory
// utilization of 1 − reserveFraction: per GPU (memory × utilization − the
// activation, CUDA-graph and communication reserve − weight bytes / tp) /
// (KV bytes per token per GPU, MLA latents and kv heads < tp replicated),
// counting sliding-window layers as full ones (a conservative bound: they
// hold fewer tokens). 0 when the weights do not fit; a model without a
// per-token cache (all layers linear attention) is bounded at 2^62.
func KVCapacityTokens(a arch.Arch, g hw.GPU, tp int, weights, kv arch.Precision, reserveFraction float64) int64 {
	util := 1 - min(max(reserveFraction, 0), 1)
	if util <= 0 {
		return 0
	}
	b, err := memory.Plan(memory.ForArch(a, g, tp, weights, kv), memory.Settings{Utilization: util})
	if err != nil {
		return 0
	}
	return b.Tokens
}

// KVCapacityTokens returns the KV-cache tokens that fit on the model's TP
// group with DefaultReserveFraction kept free (see the function
// KVCapacityTokens).
func (m *Model) KVCapacityTokens() int64 { return m.capacity }
