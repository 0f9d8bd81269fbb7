package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"splitplan/arch"
	"splitplan/costpower"
	"splitplan/hw"
	"splitplan/memory"
	"splitplan/report"
)

// checkQueryKV refuses a perf query iteration whose KV cache one replica
// of model m on machine type node (its tensor parallelism set) cannot
// hold, under the one memory model the catalog, the TP choices and the
// simulator use (the simulator refuses such a request as unservable): a
// prompt iteration of N tokens caches N tokens, a decode iteration holds
// its context (at least a token per request). Weights that do not fit
// are refused too, with their sizes and the tensor parallelisms that hold
// them (an iteration time of a replica no engine can load is not a
// figure the tool prints).
func checkQueryKV(c *cli.Context, m costpower.Model, node costpower.Machine) error {
	if c.IsSet(memoryUtilizationFlag.Name) {
		u := c.Float64(memoryUtilizationFlag.Name)
		if !(u > 0 && u <= 1) {
			return badInputf("--gpu-memory-utilization %v: expected a fraction of each GPU's memory in (0, 1], like 0.9", u)
		}
		node.GPUMemoryUtilization = u
	}
	b, err := m.Memory(node.Instance())
	var nf *memory.WeightsDoNotFitError
	if errors.As(err, &nf) {
		return badInputf("--model %s --hardware %s --tp %d: %v; %s", m.Name, c.String("hardware"), max(node.TensorParallel, 1), err, fitHint(m, node))
	}
	if err != nil {
		return badInputf("--model %s --hardware %s: %v", m.Name, c.String("hardware"), err)
	}
	var flag, what string
	var need int64
	if c.IsSet("prompt-tokens") {
		need = int64(c.Int("prompt-tokens"))
		flag, what = fmt.Sprintf("--prompt-tokens %d", need), fmt.Sprintf("a prompt of %d tokens caches them all", need)
	} else {
		n := c.Int("decode-batch")
		need = max(c.Int64("context-tokens"), int64(n))
		flag = fmt.Sprintf("--decode-batch %d", n)
		if c.IsSet("context-tokens") {
			flag = fmt.Sprintf("--context-tokens %d", need)
		}
		what = fmt.Sprintf("%d decoding requests hold %d tokens of context", n, need)
	}
	if need <= b.Tokens {
		return nil
	}
	hint := "fewer tokens"
	if tp := max(node.TensorParallel, 1); tp < node.GPUs {
		hint = "a larger --tp or " + hint
	}
	return badInputf("%s: %s in the KV cache, more than one %s replica holds (%s); ask for %s",
		flag, what, m.Name, report.MemoryText(m, node), hint)
}

// checkAnalyticQueryKV is checkQueryKV for the kernel layer's answer: a
// at precision prec on a node of GPU g at tensor parallelism tp.
func checkAnalyticQueryKV(c *cli.Context, a arch.Arch, g hw.GPU, tp int, prec arch.Precision) error {
	node, err := costpower.NodeOf(g.Name, g).WithTP(tp)
	if err != nil {
		return nil // checkQueryTP names what is wrong with tp
	}
	return checkQueryKV(c, costpower.ModelOf(a, prec), node)
}

// checkProfiledQueryKV is checkQueryKV for a profiled pair: the built-in
// catalog's model of that name on its machine type whose profile
// hardware is hardware (each machine type has its own), at tensor
// parallelism tp (no check where the catalog has neither, as for a
// --profile of other hardware).
func checkProfiledQueryKV(c *cli.Context, model, hardware string, tp int) error {
	// Where the catalog cannot size the replica, a memory share asked for
	// would change nothing: say so rather than ignore it.
	unsized := func(why string) error {
		if c.IsSet(memoryUtilizationFlag.Name) {
			return badInputf("--gpu-memory-utilization: the profiled pair %s/%s/tp%d answers as measured and %s, so no memory model applies to it; leave the flag out", model, hardware, tp, why)
		}
		return nil
	}
	cat := costpower.Default()
	m, err := cat.Model(model)
	if err != nil {
		return unsized("the catalog has no model " + model)
	}
	for _, mc := range cat.Machines {
		if strings.EqualFold(mc.PerfHardware, hardware) {
			node, err := mc.WithTP(tp)
			if err != nil {
				return unsized(fmt.Sprintf("machine type %s cannot split into tp %d", mc.Name, tp)) // a profile's tp that the machine cannot split
			}
			return checkQueryKV(c, m, node)
		}
	}
	return unsized("the catalog has no machine type of hardware " + hardware)
}

// fitHint says what would hold model m's weights where node's tensor
// parallelism does not: the larger tensor parallelisms of the node that
// do (and that its heads allow), else another precision or GPU.
func fitHint(m costpower.Model, node costpower.Machine) string {
	var fits []string
	for tp := max(node.TensorParallel, 1) + 1; tp <= node.GPUs; tp++ {
		if node.GPUs%tp != 0 {
			continue
		}
		if a, ok := m.ArchShape(); ok && checkQueryTP(a, node.GPUs, node.GPULabel(), tp) != nil {
			continue // heads the tp cannot share
		}
		n, err := node.WithTP(tp)
		if err != nil {
			continue
		}
		if _, err := m.Memory(n.Instance()); err == nil {
			fits = append(fits, fmt.Sprintf("--tp %d", tp))
		}
	}
	if len(fits) > 0 {
		return "ask for " + strings.Join(fits, " or ")
	}
	return "no tensor parallelism of this node holds them: serve it at a lower --precision or on a GPU with more memory"
}

// queryMemoryLine is the memory perf query's analytic answer assumed: the
// one memory model's split for a replica of m on node (at
// --gpu-memory-utilization when given), as simulate and optimize print it.
func queryMemoryLine(c *cli.Context, m costpower.Model, node costpower.Machine) string {
	if c.IsSet(memoryUtilizationFlag.Name) {
		node.GPUMemoryUtilization = c.Float64(memoryUtilizationFlag.Name)
	}
	return "memory: " + report.MemoryText(m, node)
}

// profiledMemoryLine is queryMemoryLine for a profiled pair: the memory
// the catalog's model of that name on the machine type of that profile
// hardware assumes (the reference simulator's rule with --compat), or ""
// where the catalog cannot size the pair.
func profiledMemoryLine(c *cli.Context, q perfQueryArgs) string {
	cat := costpower.Default()
	m, err := cat.Model(q.model)
	if err != nil {
		return ""
	}
	if q.compat {
		return "memory: " + report.ReferenceMemoryText(m)
	}
	for _, mc := range cat.Machines {
		if strings.EqualFold(mc.PerfHardware, q.hw) {
			node, err := mc.WithTP(q.tp)
			if err != nil {
				return ""
			}
			return queryMemoryLine(c, m, node)
		}
	}
	return ""
}
