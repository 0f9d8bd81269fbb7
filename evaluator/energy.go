package evaluator

import (
	"fmt"
	"strings"

	"splitplan/arch"
	"splitplan/costpower"
	"splitplan/evaluator/perf"
	"splitplan/evaluator/perf/power"
	"splitplan/hw"
)

// SecondsPerDay converts an average power to energy per day.
const SecondsPerDay = 86400

// ResolvePower returns the power model of one replica of model m on
// machine type mc under the machine's own GPU power cap (power.ForMachine
// with the architecture, precision and analytic efficiencies Resolve
// uses): the replica's own TensorParallel GPUs, whether mc is a node
// serving several replicas or one replica of it (Instance).
func (s PerfSource) ResolvePower(m costpower.Model, mc costpower.Machine) (*power.Model, error) {
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
	spec := mc.GPUSpec
	if spec == "" {
		spec = mc.GPU
	}
	g, err := hw.Lookup(spec)
	if err != nil {
		return nil, fmt.Errorf("machine type %s: %w", mc.Name, err)
	}
	eff, _ := s.Calibration.Lookup(g.Name, s.Engine)
	return power.ForMachine(mc, a, prec, eff, 0)
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
func (s PerfSource) capped(pm perf.IterationModel, pv Provenance, m costpower.Model, mc costpower.Machine, profiled bool) (perf.IterationModel, Provenance, error) {
	from, to := ProfileCap(mc, profiled), capOf(mc.GPUPowerCap)
	if from == to {
		return pm, pv, nil
	}
	pw, err := s.ResolvePower(m, mc)
	if err != nil {
		return nil, Provenance{}, fmt.Errorf("machine type %s is capped at %g of board power, and its slowdown needs the power model: %w", mc.Name, to, err)
	}
	out, err := power.NewCapped(pm, pw.Analytic(), power.BuiltinCap, from, to)
	if err != nil {
		return nil, Provenance{}, fmt.Errorf("machine type %s: %w", mc.Name, err)
	}
	pv.Source = strings.TrimSpace(fmt.Sprintf("%s, capped %g→%g by the cap curve", pv.Source, from, to))
	return out, pv, nil
}

// addEnergy adds to m's energy a run of busyS seconds of iterations of
// iterS seconds each running prompts prompt tokens and decodes decodes
// whose contexts add up to ctx tokens (nothing without a power model).
func (m *machine) addEnergy(prompts, decodes int, ctx int64, iterS, busyS float64) {
	if m.pw == nil || !(busyS > 0) {
		return
	}
	m.energyJ += m.pw.IterationW(prompts, decodes, ctx, iterS) * busyS
}

// energyResult fills the energy figures of res from the machines' busy
// energy and their idle power over the rest of [0, res.EndS]. It does
// nothing when a machine type has no power model or Options.Energy is off.
func (s *sim) energyResult(res *Result) {
	for i := range s.m {
		if s.m[i].pw == nil {
			return
		}
	}
	res.EnergyKnown = true
	res.EnergyJ = 0
	for i := range s.m {
		m := &s.m[i]
		idle := res.EndS - m.busyS
		if idle < 0 {
			idle = 0
		}
		mr := &res.Machines[i]
		mr.IdleEnergyJ = m.pw.IdleW() * idle
		mr.EnergyJ = m.energyJ + mr.IdleEnergyJ
		res.EnergyJ += mr.EnergyJ
	}
}

// AverageKW is the cluster's average draw over the run in kilowatts
// (0 when the energy is unknown or the run is empty).
func (r *Result) AverageKW() float64 {
	if !r.EnergyKnown || !(r.EndS > 0) {
		return 0
	}
	return r.EnergyJ / r.EndS / 1000
}

// KWhPerDay is the energy a day at the run's average draw: AverageKW × 24.
func (r *Result) KWhPerDay() float64 { return r.AverageKW() * 24 }

// OutputTokens is the number of output tokens of the finished requests.
// It reads Requests or, with Options.LatenciesOnly, Latencies.
func (r *Result) OutputTokens() int64 {
	var n int64
	for i := range r.RequestCount() {
		if q := r.Latency(i); q.E2ES > 0 {
			n += int64(q.OutputTokens)
		}
	}
	return n
}

// JPerOutputToken is the cluster's energy, idle time included, per output
// token (0 when unknown).
func (r *Result) JPerOutputToken() float64 {
	n := r.OutputTokens()
	if !r.EnergyKnown || n == 0 {
		return 0
	}
	return r.EnergyJ / float64(n)
}

// JPerRequest is the cluster's energy, idle time included, per finished
// request (0 when unknown).
func (r *Result) JPerRequest() float64 {
	if !r.EnergyKnown || r.Completed == 0 {
		return 0
	}
	return r.EnergyJ / float64(r.Completed)
}

// resolvePowers sets the cluster's power models, or says in PowerNote why
// there are none (the simulation then reports no energy).
func (c *Cluster) resolvePowers(src PerfSource) {
	var err error
	if c.PromptPower, err = src.ResolvePower(c.Model, c.PromptType); err == nil {
		c.TokenPower, err = src.ResolvePower(c.Model, c.TokenType)
	}
	if err != nil {
		c.PromptPower, c.TokenPower = nil, nil
		c.PowerNote = "no energy: " + err.Error()
	}
}
