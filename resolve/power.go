package resolve

import (
	"fmt"
	"strings"

	"splitplan/arch"
	"splitplan/costpower"
	"splitplan/evaluator/perf"
	"splitplan/evaluator/perf/power"
	"splitplan/hw"
)

// ResolvePower returns the power model of one replica of model m on
// machine type mc under the machine's own GPU power cap (power.ForReplica
// of PowerReplica, with the architecture, precision and analytic
// efficiencies Resolve uses): the replica's own TensorParallel GPUs,
// whether mc is a node serving several replicas or one replica of it
// (Instance).
func (s Source) ResolvePower(m costpower.Model, mc costpower.Machine) (*power.Model, error) {
	if m.Arch == "" {
		return nil, fmt.Errorf("model %s has no architecture (arch) for the power model", m.Name)
	}
	a, err := s.lookupArch(m.Arch)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", m.Name, err)
	}
	prec := arch.BF16
	if m.Precision != "" {
		if prec, err = arch.ParsePrecision(m.Precision); err != nil {
			return nil, fmt.Errorf("model %s: %w", m.Name, err)
		}
	}
	g, err := hw.Lookup(mc.GPUSpecName())
	if err != nil {
		return nil, fmt.Errorf("machine type %s: %w", mc.Name, err)
	}
	eff, _ := s.Calibration.Lookup(g.Name, s.Engine)
	r := PowerReplica(mc, g, 0)
	r.MoE = moePath(a, prec, g, s.Engine, eff)
	return power.ForReplica(r, a, prec, eff)
}

// PowerReplica is one model replica of machine type mc, whose GPUs' spec
// sheet is g, as package power reads it: mc's Instance (a node serving
// several replicas is modelled as one replica of TensorParallel GPUs,
// which is what the simulator runs), its tensor parallelism (its GPUs
// when unset), its GPUPowerW (0: g's TDP) and capFraction (0: its
// GPUPowerCap).
func PowerReplica(mc costpower.Machine, g hw.GPU, capFraction float64) power.Replica {
	mc = mc.Instance()
	tp := mc.TensorParallel
	if tp <= 0 {
		tp = mc.GPUs
	}
	if capFraction == 0 {
		capFraction = mc.GPUPowerCap
	}
	return power.Replica{Name: mc.Name, GPU: g, TP: tp, GPUs: max(mc.GPUs, tp), BoardW: mc.GPUPowerW, CapFraction: capFraction}
}

// capOf is a cap fraction with 0 read as 1 (uncapped).
func capOf(c float64) float64 {
	if c == 0 {
		return 1
	}
	return c
}

// ProfileCap is the GPU power cap machine type mc's iteration times were
// measured at: its PerfPowerCap when set (a capped variant made by
// costpower.Machine.WithCap keeps its base's), else its GPUPowerCap; 1
// for the analytic model, which runs at the full clock.
func ProfileCap(mc costpower.Machine, profiled bool) float64 {
	if !profiled {
		return 1
	}
	if mc.PerfPowerCap > 0 {
		return mc.PerfPowerCap
	}
	return capOf(mc.GPUPowerCap)
}

// capped wraps the iteration model pm of model m on mc with the power
// cap's slowdown when mc's cap differs from the cap pm's times hold at
// (profiled says whether they come from a profile); it returns pm itself
// when they agree, so an uncapped machine type's results do not change.
func (s Source) capped(pm perf.IterationModel, pv perf.Provenance, m costpower.Model, mc costpower.Machine, profiled bool) (perf.IterationModel, perf.Provenance, error) {
	from, to := ProfileCap(mc, profiled), capOf(mc.GPUPowerCap)
	if from == to {
		return pm, pv, nil
	}
	pw, err := s.ResolvePower(m, mc)
	if err != nil {
		return nil, perf.Provenance{}, fmt.Errorf("machine type %s is capped at %g of board power, and its slowdown needs the power model: %w", mc.Name, to, err)
	}
	out, err := power.NewCapped(pm, pw.Analytic(), power.BuiltinCap, from, to)
	if err != nil {
		return nil, perf.Provenance{}, fmt.Errorf("machine type %s: %w", mc.Name, err)
	}
	pv.Source = strings.TrimSpace(fmt.Sprintf("%s, capped %g→%g by the cap curve", pv.Source, from, to))
	return out, pv, nil
}

// setPowers sets the cluster's power models, or says in PowerNote why
// there are none (the simulation then reports no energy).
func setPowers(c *Cluster, src Source) {
	var err error
	if c.PromptPower, err = src.ResolvePower(c.Model, c.PromptType); err == nil {
		c.TokenPower, err = src.ResolvePower(c.Model, c.TokenType)
	}
	if err != nil {
		c.PromptPower, c.TokenPower = nil, nil
		c.PowerNote = "no energy: " + err.Error()
	}
}
