package evaluator

import (
	"errors"
	"fmt"
	"math"
)

// Scaling changes which of the cluster's machines serve over a run
// (Options.Scaling): at scheduled steps, or by an autoscaler watching
// each pool's load. The cluster's counts are the most machines of each
// pool that may serve; the others stand by, powered off. A machine taken
// out of service gets no new requests and powers off once it has drained
// (its running and promised work done); one put back into service while
// draining serves at once.
type Scaling struct {
	// Steps, in time order, the first at 0: from AtS on, Prompt machines of
	// the prompt pool (a baseline's machines) and Token of the token pool
	// serve. A step's new machines are started DelayS before AtS (their
	// model loaded by AtS), so they are powered from then.
	Steps []ScaleStep
	// DelayS is the time from starting a machine to its serving (model
	// load): paid, not served, by a scheduled step; an autoscaler's
	// machine serves DelayS after its decision.
	DelayS float64
	// Auto, when not nil, scales each pool by its load from Steps[0]'s
	// counts on (Steps must then hold that one step).
	Auto *AutoScale
}

// ScaleStep is one step of a scaling schedule: the machines of each pool
// that serve from AtS on.
type ScaleStep struct {
	AtS           float64
	Prompt, Token int
}

// AutoScale is a reactive autoscaler in the manner of Kubernetes' HPA:
// every PeriodS it measures each pool's utilization (a prompt pool's busy
// fraction over the period; a token or baseline pool's reserved KV-cache
// fraction, since it runs whenever anything decodes; at least 1 when more
// than one task a serving machine waits) and, outside a ±10% band around TargetUtil, asks for
// ⌈serving × utilization / TargetUtil⌉ machines: more at once (serving
// DelayS later); fewer only CooldownS after the pool's last scale-up, no
// fewer than any look of the last CooldownS wanted, and at most a tenth
// of the serving machines a look (HPA's stabilization).
type AutoScale struct {
	PeriodS, CooldownS, TargetUtil float64
	// MinPrompt and MinToken are the fewest machines a pool keeps (at
	// least 1).
	MinPrompt, MinToken int
}

// poolStandby holds the machines that do not serve (standing by or
// draining): the cluster scheduler never routes to it.
const poolStandby int8 = 4

// scaleBand is the autoscaler's tolerance around its target.
const scaleBand = 0.1

// check validates sc for a cluster of prompt and token machines (token 0:
// a baseline).
func (sc *Scaling) check(prompt, token int, baseline bool) error {
	if len(sc.Steps) == 0 || sc.Steps[0].AtS != 0 {
		return errors.New("scaling: the first step must be at 0 s (the counts at the start)")
	}
	if !(sc.DelayS >= 0) || math.IsInf(sc.DelayS, 0) {
		return fmt.Errorf("scaling: delay %v is not a duration ≥ 0", sc.DelayS)
	}
	for i, st := range sc.Steps {
		if i > 0 && !(st.AtS > sc.Steps[i-1].AtS) || math.IsInf(st.AtS, 0) {
			return fmt.Errorf("scaling: step %d at %v s does not come after step %d", i, st.AtS, i-1)
		}
		if st.Prompt < 1 || st.Prompt > prompt || !baseline && (st.Token < 1 || st.Token > token) || baseline && st.Token != 0 {
			return fmt.Errorf("scaling: step %d asks for %d prompt and %d token machines, the cluster has %d and %d (at least one each)", i, st.Prompt, st.Token, prompt, token)
		}
	}
	if a := sc.Auto; a != nil {
		switch {
		case len(sc.Steps) != 1:
			return errors.New("scaling: an autoscaler starts from one step (the counts at 0 s)")
		case !(a.PeriodS > 0) || math.IsInf(a.PeriodS, 0):
			return fmt.Errorf("scaling: autoscaler period %v is not a positive duration", a.PeriodS)
		case !(a.CooldownS >= 0) || math.IsInf(a.CooldownS, 0):
			return fmt.Errorf("scaling: autoscaler cooldown %v is not a duration ≥ 0", a.CooldownS)
		case !(a.TargetUtil > 0 && a.TargetUtil <= 1):
			return fmt.Errorf("scaling: autoscaler target utilization %v is not in (0, 1]", a.TargetUtil)
		case a.MinPrompt < 1 || a.MinPrompt > prompt || !baseline && (a.MinToken < 1 || a.MinToken > token):
			return fmt.Errorf("scaling: autoscaler minimums %d prompt, %d token outside the cluster's 1..%d and 1..%d", a.MinPrompt, a.MinToken, prompt, token)
		}
	}
	return nil
}

// scaler is a run's scaling state.
type scaler struct {
	cfg  *Scaling
	next int // the next step of cfg.Steps
	// tick is the autoscaler's next look (+Inf without one); pending its
	// machines started and not yet serving, by home pool, serving at
	// readyAt (time order).
	tick    float64
	pending []scaleStart
	// lastChange and lastBusy are, by home pool (0: prompt or baseline, 1:
	// token), the autoscaler's last change and the pool's busy seconds at
	// its last look.
	lastChange, lastBusy [2]float64
	// wants are, by home pool, the machines each look of the last
	// CooldownS wanted (scale-down's stabilization window).
	wants [2][]scaleWant
	// Per machine: on reports it powered (serving, starting or draining),
	// onSince since when, offAt when it left service, lastEnd its last run's
	// end, poweredS its closed powered intervals.
	on                              []bool
	onSince, offAt, lastEnd, powerS []float64
	// startS is, per machine, its powered time before it served (starts).
	startS []float64
}

// scaleStart is a machine the autoscaler started, serving at readyAt.
type scaleStart struct {
	id      int32
	readyAt float64
}

// scaleWant is what one look of the autoscaler wanted for a pool.
type scaleWant struct {
	at   float64
	want int
}

// homeIndex maps a home pool to the scaler's pool index.
func homeIndex(home int8) int {
	if home == poolToken {
		return 1
	}
	return 0
}

// startScaling puts the machines of the first step in service and the
// others on standby (newSim, with Options.Scaling set).
func (s *sim) startScaling() error {
	sc := s.opt.Scaling
	if err := sc.check(s.cl.Prompt, s.cl.Token, s.base); err != nil {
		return err
	}
	n := len(s.m)
	s.scale = &scaler{cfg: sc, next: 1, tick: math.Inf(1), on: make([]bool, n), onSince: make([]float64, n),
		offAt: make([]float64, n), lastEnd: make([]float64, n), powerS: make([]float64, n), startS: make([]float64, n)}
	if sc.Auto != nil {
		s.scale.tick = sc.Auto.PeriodS
	}
	want := [2]int{sc.Steps[0].Prompt, sc.Steps[0].Token}
	var serving [2]int
	for i := range s.m {
		m := &s.m[i]
		h := homeIndex(m.home)
		if serving[h] < want[h] {
			serving[h]++
			s.scale.on[i] = true
			continue
		}
		s.relocate(m, poolStandby)
	}
	return nil
}

// nextScale is the time of the next scaling action (+Inf: none).
func (s *sim) nextScale() float64 {
	sc := s.scale
	t := sc.tick
	if sc.next < len(sc.cfg.Steps) {
		t = min(t, sc.cfg.Steps[sc.next].AtS)
	}
	if len(sc.pending) > 0 {
		t = min(t, sc.pending[0].readyAt)
	}
	return t
}

// scaleAt takes every scaling action due at now: machines started that
// are ready, a scheduled step, an autoscaler's look.
func (s *sim) scaleAt(now float64) {
	sc := s.scale
	for len(sc.pending) > 0 && sc.pending[0].readyAt <= now {
		id := sc.pending[0].id
		sc.startS[id] += now - sc.onSince[id]
		s.serve(&s.m[id], now)
		sc.pending = sc.pending[1:]
	}
	if sc.next < len(sc.cfg.Steps) && sc.cfg.Steps[sc.next].AtS <= now {
		st := sc.cfg.Steps[sc.next]
		sc.next++
		s.scaleTo(0, st.Prompt, now, now-sc.cfg.DelayS)
		if !s.base {
			s.scaleTo(1, st.Token, now, now-sc.cfg.DelayS)
		}
	}
	if sc.tick <= now {
		s.autoscale(now)
		sc.tick = now + sc.cfg.Auto.PeriodS
	}
}

// serving counts the machines of home pool h in service (and, with
// pending, those started and not yet serving).
func (s *sim) serving(h int, pending bool) int {
	n := 0
	for i := range s.m {
		if homeIndex(s.m[i].home) == h && s.m[i].pool != poolStandby {
			n++
		}
	}
	if pending {
		for _, p := range s.scale.pending {
			if homeIndex(s.m[p.id].home) == h {
				n++
			}
		}
	}
	return n
}

// scaleTo brings home pool h to want machines in service at now: machines
// draining serve again first, then machines powered off, started at
// startAt; machines leave service least loaded first.
func (s *sim) scaleTo(h, want int, now, startAt float64) {
	have := s.serving(h, false)
	for ; have < want; have++ {
		m := s.standby(h, now)
		if m == nil {
			return
		}
		if s.power(m, startAt) {
			s.scale.startS[m.id] += now - s.scale.onSince[m.id]
		}
		s.serve(m, now)
	}
	for ; have > want; have-- {
		s.retire(h, now)
	}
}

// standby is the machine of home pool h to put into service: one
// draining (powered), else the first powered off; nil when none stands by.
func (s *sim) standby(h int, now float64) *machine {
	var off *machine
	for _, id := range s.pools[poolStandby] {
		m := &s.m[id]
		if homeIndex(m.home) != h || s.isStarting(id) {
			continue
		}
		if s.scale.on[id] && !s.drained(m, now) {
			return m
		}
		if off == nil || m.id < off.id {
			off = m
		}
	}
	return off
}

// isStarting reports that machine id was started and is not serving yet.
func (s *sim) isStarting(id int32) bool {
	for _, p := range s.scale.pending {
		if p.id == id {
			return true
		}
	}
	return false
}

// drained reports that machine m, out of service, has nothing left to do
// at now.
func (s *sim) drained(m *machine, now float64) bool {
	return !m.busy && s.load[m.id] == machineLoad{} && len(m.queue)+len(m.preempted)+len(m.waitXfer) == 0 && s.scale.lastEnd[m.id] <= now
}

// power powers machine m from at on, closing its last powered interval
// if it had drained; it reports whether it started m (a new interval).
func (s *sim) power(m *machine, at float64) bool {
	sc := s.scale
	from := max(at, 0)
	if sc.on[m.id] {
		if !s.drained(m, at) || m.pool != poolStandby {
			return false // still draining or serving: powered all along
		}
		end := max(sc.offAt[m.id], sc.lastEnd[m.id])
		sc.powerS[m.id] += end - sc.onSince[m.id]
		from = max(from, end) // (a start before its last power-off: powered between)
	}
	sc.on[m.id], sc.onSince[m.id] = true, from
	return true
}

// serve puts machine m (powered) into service at now.
func (s *sim) serve(m *machine, now float64) {
	if m.pool == poolStandby {
		s.relocate(m, m.home)
	}
}

// retire takes the least-loaded machine of home pool h (the last of
// equals) out of service at now.
func (s *sim) retire(h int, now float64) {
	var pick *machine
	for i := range s.m {
		m := &s.m[i]
		if homeIndex(m.home) != h || m.pool == poolStandby {
			continue
		}
		if pick == nil || s.load[m.id][byPending] < s.load[pick.id][byPending] ||
			s.load[m.id][byPending] == s.load[pick.id][byPending] && s.load[m.id][byMemory] <= s.load[pick.id][byMemory] {
			pick = m
		}
	}
	if pick == nil {
		return
	}
	s.scale.offAt[pick.id] = now
	s.relocate(pick, poolStandby)
}

// autoscale is the autoscaler's look at now.
func (s *sim) autoscale(now float64) {
	sc, a := s.scale, s.scale.cfg.Auto
	pools := 2
	if s.base {
		pools = 1
	}
	for h := range pools {
		serving := s.serving(h, false)
		busy, used, capacity, waiting := 0.0, int64(0), int64(0), 0
		for i := range s.m {
			m := &s.m[i]
			if homeIndex(m.home) != h {
				continue
			}
			busy += m.busyS
			if m.pool != poolStandby {
				used += s.load[m.id][byMemory]
				capacity += m.capacity
				waiting += len(m.queue) + len(m.waitXfer)
			}
		}
		util := (busy - sc.lastBusy[h]) / (float64(serving) * a.PeriodS)
		sc.lastBusy[h] = busy
		if (h == 1 || s.base) && capacity > 0 {
			// A token or baseline pool runs whenever anything decodes:
			// its load is the KV-cache it holds.
			util = float64(used) / float64(capacity)
		}
		if waiting > serving {
			// More than a task waiting a machine: a queue builds,
			// whatever the utilization says.
			util = max(util, 1)
		}
		if math.Abs(util/a.TargetUtil-1) <= scaleBand {
			continue
		}
		lo, hi := a.MinPrompt, s.cl.Prompt
		if h == 1 {
			lo, hi = a.MinToken, s.cl.Token
		}
		want := min(max(int(math.Ceil(float64(serving)*util/a.TargetUtil)), lo), hi)
		// Scale-down is stabilized as Kubernetes' HPA does it: the most
		// any look over the last CooldownS wanted, and at most a tenth
		// of the serving machines a look.
		sc.wants[h] = append(sc.wants[h], scaleWant{now, want})
		for len(sc.wants[h]) > 0 && sc.wants[h][0].at < now-a.CooldownS {
			sc.wants[h] = sc.wants[h][1:]
		}
		down := want
		for _, w := range sc.wants[h] {
			down = max(down, w.want)
		}
		down = max(down, serving-max(1, serving/10))
		withPending := s.serving(h, true)
		switch {
		case want > withPending:
			for range want - withPending {
				m := s.standby(h, now)
				if m == nil {
					break
				}
				draining := sc.on[m.id] && !s.drained(m, now)
				s.power(m, now)
				if draining {
					s.serve(m, now) // still loaded: serves again at once
				} else {
					sc.pending = append(sc.pending, scaleStart{m.id, now + sc.cfg.DelayS})
				}
			}
			sc.lastChange[h] = now
		case down < serving && now-sc.lastChange[h] >= a.CooldownS:
			for range serving - down {
				s.retire(h, now)
			}
		}
	}
}

// scaledRun notes machine m's run ending at now (its last work, when out
// of service).
func (s *sim) scaledRun(m *machine, now float64) {
	if s.scale != nil {
		s.scale.lastEnd[m.id] = now
	}
}

// startingS returns machine id's powered seconds before it served (its
// starts: model loads).
func (s *sim) startingS(id int) float64 {
	if s.scale == nil {
		return 0
	}
	return s.scale.startS[id]
}

// poweredS returns machine id's powered seconds over a run that ended at
// endS.
func (s *sim) poweredS(id int, endS float64) float64 {
	sc := s.scale
	if sc == nil {
		return endS
	}
	p := sc.powerS[id]
	if sc.on[id] {
		end := endS
		if s.m[id].pool == poolStandby {
			end = min(endS, max(sc.offAt[id], sc.lastEnd[id]))
		}
		p += max(end-sc.onSince[id], 0)
	}
	return p
}
