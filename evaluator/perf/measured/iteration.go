package measured

import (
	"fmt"

	"splitplan/arch"
	"splitplan/evaluator/perf/analytic"
	"splitplan/evaluator/perf/kernel"
	"splitplan/hw"
	"splitplan/memory"
)

// workerShape is one engine instance's layout.
type workerShape struct {
	TP, DP, EP int // attention TP, attention DP, expert parallel degree
}

// GPUs returns the GPUs of one instance: TP × DP.
func (w workerShape) GPUs() int { return w.TP * w.DP }

// iterModel prepares analytic.Model instances for one instance layout: the
// architecture, the GPU, the rank's TP and attention DP (analytic.Config.DP
// models one rank), the precisions and the engine's memory settings
// (analytic.Config.Memory; zero for the default). The efficiencies vary per
// fit evaluation, so the analytic model is built per call of model.
type iterModel struct {
	a      arch.Arch
	g      hw.GPU
	w      workerShape
	weight arch.Precision
	kv     arch.Precision
	mem    memory.Settings
	// expert is how the engine runs the routed experts
	// (analytic.Config.MoE).
	expert kernel.MoEPath
}

func newIterModel(a arch.Arch, g hw.GPU, w workerShape, weight, kv arch.Precision, mem memory.Settings, expert kernel.MoEPath) (*iterModel, error) {
	if w.TP < 1 || w.DP < 1 || w.EP < 1 {
		return nil, fmt.Errorf("worker layout %+v: expected positive degrees", w)
	}
	m := &iterModel{a: a, g: g, w: w, weight: weight, kv: kv, mem: mem, expert: expert}
	// Check once that the layout is valid (weights fit, etc.).
	if _, err := m.model(analytic.DefaultEfficiency); err != nil {
		return nil, err
	}
	return m, nil
}

// model returns the analytic model of one rank with efficiencies eff.
func (m *iterModel) model(eff analytic.Efficiency) (*analytic.Model, error) {
	ep := 1
	if m.w.EP > 1 && m.w.TP%m.w.EP == 0 {
		ep = m.w.EP
	}
	return analytic.New(analytic.Config{Arch: m.a, GPU: m.g, TP: m.w.TP, EP: ep, DP: m.w.DP, Weights: m.weight, KV: m.kv, Eff: eff, Memory: m.mem, MoE: m.expert})
}
