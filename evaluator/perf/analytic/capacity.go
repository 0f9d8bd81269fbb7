package analytic

import (
	"math"

	"splitplan/arch"
	"splitplan/hw"
)

// DefaultReserveFraction is the share of each GPU's memory kept free of
// weights and KV cache for activations, the CUDA context, communication
// buffers and fragmentation (vLLM's default gpu_memory_utilization of 0.9
// leaves the same 10%).
const DefaultReserveFraction = 0.1

// KVCapacityTokens returns the tokens of KV cache that fit on a tp-way
// group of GPUs g serving a at the given weight and KV precisions, after
// the weights and a reserve of reserveFraction of each GPU's memory: per
// GPU (memory × (1 − reserve) − weight bytes / tp) / (KV bytes per token
// per GPU), counting sliding-window layers as full ones (a conservative
// bound: they hold fewer tokens). 0 when nothing fits; a model without a
// per-token cache (all layers linear attention) is bounded at 2^62.
func KVCapacityTokens(a arch.Arch, g hw.GPU, tp int, weights, kv arch.Precision, reserveFraction float64) int64 {
	return kvCapacity(a, g, tp, weights, kv, reserveFraction)
}

func kvCapacity(a arch.Arch, g hw.GPU, tp int, weights, kv arch.Precision, reserve float64) int64 {
	tp = max(tp, 1)
	reserve = min(max(reserve, 0), 1)
	free := g.MemoryBytes()*(1-reserve) - float64(a.WeightBytes(weights))/float64(tp)
	if !(free > 0) {
		return 0
	}
	full, win := a.KVBytesPerTokenPerGPU(kv, tp)
	per := full + win
	if per <= 0 {
		return 1 << 62
	}
	return int64(math.Min(math.Floor(free/per), 1<<62))
}

// KVCapacityTokens returns the KV-cache tokens that fit on the model's TP
// group with DefaultReserveFraction kept free (see the function
// KVCapacityTokens).
func (m *Model) KVCapacityTokens() int64 { return m.capacity }
