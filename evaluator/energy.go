package evaluator

import "splitplan/traces"

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
// run, [0, res.EndS], unless Options.Scaling powers them on and off), and
// what the steady draw needs (Result.SteadyJ, AverageKW): the machines' idle draw,
// the energy their iterations drew above it, and the arrivals' window. It
// does nothing when a machine type has no power model or Options.Energy
// is off.
func (s *sim) energyResult(res *Result) {
	for i := range s.m {
		if s.m[i].pw == nil {
			return
		}
	}
	res.EnergyKnown = true
	res.EnergyJ, res.IdleDrawW, res.WorkEnergyJ = 0, 0, 0
	maxDrawW := 0.0
	for i := range s.m {
		m := &s.m[i]
		idle := res.Machines[i].PoweredS - m.busyS
		if idle < 0 {
			idle = 0
		}
		mr := &res.Machines[i]
		idleW := m.pw.IdleW()
		mr.IdleEnergyJ = idleW * idle
		mr.EnergyJ = m.energyJ + mr.IdleEnergyJ
		res.EnergyJ += mr.EnergyJ
		res.IdleDrawW += idleW
		maxDrawW += m.pw.MaxW()
		// (IterationW ≥ IdleW: never negative but for rounding)
		res.WorkEnergyJ += max(m.energyJ-idleW*m.busyS, 0)
	}
	res.ArrivalWindowS = 0
	if s.scale == nil && !res.Aborted && !res.Stopped {
		w := arrivalWindowS(s.reqs)
		// A run whose work needs more than the window even at the
		// machines' most draw did not keep up with its arrivals: no
		// steady state exists, and its figure stays the run's.
		if w > 0 && res.IdleDrawW*w+res.WorkEnergyJ <= maxDrawW*w {
			res.ArrivalWindowS = w
		}
	}
}

// arrivalWindowS is the span of time whose arrivals reqs (sorted by
// arrival) are: n arrivals at the rate their n − 1 gaps give, n × the mean
// gap (for a Poisson stream over [0, D], D on average). 0 with fewer than
// two arrivals or all at one instant: no rate.
func arrivalWindowS(reqs []traces.Request) float64 {
	n := len(reqs)
	if n < 2 {
		return 0
	}
	span := reqs[n-1].Arrival - reqs[0].Arrival
	if !(span > 0) {
		return 0
	}
	return span * float64(n) / float64(n-1)
}

// SteadyJ is the energy in joules of serving the run's arrivals in steady
// state over their window (Result.ArrivalWindowS): every machine's idle
// draw all that time, plus the energy the iterations drew above it. A
// finite run ends with a drain, its machines idling while the last
// requests finish (a 120 s trace of 70 req/s can end at 190 s), which
// steady traffic would fill with the next arrivals' work; averaging the
// run's energy over its end instead makes the figure depend on the
// trace's length (Splitwise-HA 23P/19T: 2,489 kWh/day from 120 s, 3,335
// from 1,920 s; the steady draw 3,509 and 3,419). Without a window (an
// autoscaled run, whose profile is not a steady state, a run stopped or
// aborted early, fewer than two arrivals, or all at once) it is the
// run's energy, EnergyJ; so too where the steady draw would exceed the
// machines' most (their work needs more than the window at full draw:
// the run did not keep up with its arrivals, energyResult).
func (r *Result) SteadyJ() float64 {
	if !r.EnergyKnown {
		return 0
	}
	if r.ArrivalWindowS > 0 {
		return r.IdleDrawW*r.ArrivalWindowS + r.WorkEnergyJ
	}
	return r.EnergyJ
}

// AverageKW is the cluster's steady draw in kilowatts: SteadyJ over the
// time it is spent over, the arrivals' window or without one the run, [0,
// EndS] (0 when the energy is unknown or the run is empty).
func (r *Result) AverageKW() float64 {
	s := r.EndS
	if r.ArrivalWindowS > 0 {
		s = r.ArrivalWindowS
	}
	if !r.EnergyKnown || !(s > 0) {
		return 0
	}
	return r.SteadyJ() / s / 1000
}

// KWhPerDay is the energy a day at the steady draw: AverageKW × 24.
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

// JPerOutputToken is the cluster's steady energy (SteadyJ), idle draw
// included, per output token (0 when unknown).
func (r *Result) JPerOutputToken() float64 {
	n := r.OutputTokens()
	if !r.EnergyKnown || n == 0 {
		return 0
	}
	return r.SteadyJ() / float64(n)
}

// JPerRequest is the cluster's steady energy (SteadyJ), idle draw
// included, per finished request (0 when unknown).
func (r *Result) JPerRequest() float64 {
	if !r.EnergyKnown || r.Completed == 0 {
		return 0
	}
	return r.SteadyJ() / float64(r.Completed)
}
