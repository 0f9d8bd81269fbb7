package evaluator

// SecondsPerDay converts an average power to energy per day.
const SecondsPerDay = 86400

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
// energy and their idle power over the rest of their powered time (the
// run, [0, res.EndS], unless Options.Scaling powers them on and off). It does
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
		idle := res.Machines[i].PoweredS - m.busyS
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
// It reads Requests or, with Options.LatenciesOnly, Latencies (with
// Options.Streamed, the Summary's count).
func (r *Result) OutputTokens() int64 {
	if r.Summary != nil {
		return r.Summary.OutputTokens
	}
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
