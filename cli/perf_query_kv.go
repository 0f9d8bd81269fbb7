package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"splitplan/costpower"
	"splitplan/memory"
	"splitplan/report"
)

// checkQueryKV refuses a perf query iteration whose KV cache one replica
// of model m on machine type node (its tensor parallelism and
// --gpu-memory-utilization set: withQueryUtilization) cannot hold, under the one memory model the catalog, the TP choices and the
// simulator use (the simulator refuses such a request as unservable): a
// prompt iteration of N tokens caches N tokens, a decode iteration holds
// its context (at least a token per request). Weights that do not fit
// are refused too, with their sizes and the tensor parallelisms that hold
// them (an iteration time of a replica no engine can load is not a
// figure the tool prints).
func checkQueryKV(c *cli.Context, m costpower.Model, node costpower.Machine) error {
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
	if isSet(c, "prompt-tokens") {
		need = int64(c.Int("prompt-tokens"))
		flag, what = fmt.Sprintf("--prompt-tokens %d", need), fmt.Sprintf("a prompt of %d tokens caches them all", need)
	} else {
		n := c.Int("decode-batch")
		need = max(c.Int64("context-tokens"), int64(n))
		flag = fmt.Sprintf("--decode-batch %d", n)
		if isSet(c, "context-tokens") {
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

// profiledReplica is what the built-in catalog knows of a profiled pair:
// its model of that name (hasModel) on its machine type whose profile
// hardware is the pair's (each machine type has its own) at the pair's
// tensor parallelism, with --gpu-memory-utilization applied; unsized says
// what the catalog lacks to size it ("" when it can).
type profiledReplica struct {
	m        costpower.Model
	node     costpower.Machine
	hasModel bool
	unsized  string
}

// profiledReplicaOf looks q's pair up in the built-in catalog.
func profiledReplicaOf(c *cli.Context, q perfQueryArgs) profiledReplica {
	var r profiledReplica
	cat := costpower.Default()
	m, err := cat.Model(q.model)
	if err != nil {
		r.unsized = "the catalog has no model " + q.model
		return r
	}
	r.m, r.hasModel = m, true
	for _, mc := range cat.Machines {
		if strings.EqualFold(mc.PerfHardware, q.hw) {
			node, err := mc.WithTP(q.tp)
			if err != nil {
				r.unsized = fmt.Sprintf("machine type %s cannot split into tp %d", mc.Name, q.tp) // a profile's tp that the machine cannot split
				return r
			}
			r.node = withQueryUtilization(c, node)
			return r
		}
	}
	r.unsized = "the catalog has no machine type of hardware " + q.hw
	return r
}

// checkProfiledQueryKV is checkQueryKV for a profiled pair (no check where
// the catalog cannot size it, as for a --profile of other hardware, but
// there a memory share asked for would change nothing: it is refused
// rather than ignored).
func checkProfiledQueryKV(c *cli.Context, q perfQueryArgs, r profiledReplica) error {
	if r.unsized == "" {
		return checkQueryKV(c, r.m, r.node)
	}
	if isSet(c, memoryUtilizationFlag.Name) {
		return badInputf("--gpu-memory-utilization: the profiled pair %s/%s/tp%d answers as measured and %s, so no memory model applies to it; leave the flag out", q.model, q.hw, q.tp, r.unsized)
	}
	return nil
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

// withQueryUtilization is node with --gpu-memory-utilization, when given
// (perfQueryFrom checked it), as its engine's share of each GPU.
func withQueryUtilization(c *cli.Context, node costpower.Machine) costpower.Machine {
	if u, set, _ := memoryUtilization(c); set {
		node.GPUMemoryUtilization = u
	}
	return node
}

// queryMemoryLine is the memory perf query's answer assumed: the one
// memory model's split for a replica of m on node, as simulate and
// optimize print it.
func queryMemoryLine(m costpower.Model, node costpower.Machine) string {
	return "memory: " + report.MemoryText(m, node)
}

// profiledMemoryLine is queryMemoryLine for a profiled pair (the reference
// simulator's rule with --compat), or "" where the catalog cannot size it.
func profiledMemoryLine(q perfQueryArgs, r profiledReplica) string {
	switch {
	case q.compat && r.hasModel:
		return "memory: " + report.ReferenceMemoryText(r.m)
	case q.compat || r.unsized != "":
		return ""
	}
	return queryMemoryLine(r.m, r.node)
}
