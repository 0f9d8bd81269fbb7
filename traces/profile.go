package traces

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Profile is an arrival rate that varies over time: rates at knots, held
// as steps or interpolated linearly between them, repeating with period
// SpanS. Arrivals at a mean rate r follow r/Mean() times the profile: a
// non-homogeneous Poisson process (or, with burstiness, a renewal process)
// whose time is warped by the profile's cumulative rate, so every rate
// sees the same requests in the same order, compressed where the profile
// is high.
type Profile struct {
	// Name says how the profile was given, for output.
	Name string
	// segs are the profile's pieces over one period, in time order.
	segs []segment
	// spanS is the period; massS the requests of one period at the
	// profile's own rates (∫ rate over the period).
	spanS, mass float64
}

// segment is one piece of a profile: from StartS for WidthS seconds, the
// rate going linearly from A to B (A = B: a step); Cum is the requests
// before the segment.
type segment struct {
	StartS, WidthS, A, B, Cum float64
}

// mass returns the requests of the first x seconds of the segment.
func (s segment) massAt(x float64) float64 {
	return s.A*x + (s.B-s.A)*x*x/(2*s.WidthS)
}

// timeOf returns the seconds into the segment at which m requests (0 ≤ m
// ≤ its mass) have arrived.
func (s segment) timeOf(m float64) float64 {
	if m <= 0 {
		return 0
	}
	d := s.B - s.A
	if d == 0 {
		return m / s.A
	}
	// a·x + d·x²/(2w) = m, the root in [0, w], in the form that does not
	// cancel when d is small.
	a := s.A
	disc := a*a + 2*d*m/s.WidthS
	if math.IsInf(disc, 0) || math.IsNaN(disc) {
		// Rates beyond 1e154 overflow the square: the same root with
		// the rates and m divided by the larger rate.
		sc := math.Max(math.Abs(s.A), math.Abs(s.B))
		a, d, m = a/sc, d/sc, m/sc
		disc = a*a + 2*d*m/s.WidthS
	}
	return math.Min(s.WidthS, 2*m/(a+math.Sqrt(math.Max(disc, 0))))
}

// newProfile builds a profile from knots: times (first 0, increasing)
// and their rates. With linear the rate goes linearly from each knot to
// the next and the last knot ends the period (at spanS); else each rate
// holds until the next knot, the last one until spanS.
func newProfile(name string, times, rates []float64, linear bool, spanS float64) (*Profile, error) {
	if len(times) == 0 || len(times) != len(rates) || linear && len(times) < 2 {
		return nil, fmt.Errorf("rate profile %s: too few knots", name)
	}
	if times[0] != 0 {
		return nil, fmt.Errorf("rate profile %s: the first time is %gs: a profile starts at 0", name, times[0])
	}
	pieces := len(times)
	if linear {
		pieces--
		if times[pieces] != spanS {
			return nil, fmt.Errorf("rate profile %s: the last knot (%gs) does not end the period (%gs)", name, times[pieces], spanS)
		}
	}
	p := &Profile{Name: name, spanS: spanS}
	for i := range times {
		if !(rates[i] >= 0) || math.IsInf(rates[i], 0) {
			return nil, fmt.Errorf("rate profile %s: rate %v at %gs is not a number of requests per second ≥ 0", name, rates[i], times[i])
		}
	}
	for i := range pieces {
		end := spanS
		if i+1 < len(times) {
			end = times[i+1]
		}
		if !(end > times[i]) || math.IsInf(end, 0) {
			return nil, fmt.Errorf("rate profile %s: times must increase (%gs after %gs)", name, end, times[i])
		}
		b := rates[i]
		if linear {
			b = rates[i+1]
		}
		s := segment{StartS: times[i], WidthS: end - times[i], A: rates[i], B: b, Cum: p.mass}
		p.segs = append(p.segs, s)
		p.mass += s.massAt(s.WidthS)
	}
	if math.IsInf(p.mass, 0) || math.IsNaN(p.mass) {
		return nil, fmt.Errorf("rate profile %s: its requests a period (rates × times) are too large to compute", name)
	}
	if !(p.mass > 0) {
		return nil, fmt.Errorf("rate profile %s: every rate is 0: no request would arrive", name)
	}
	return p, nil
}

// Constant reports whether the profile's rate never changes: its
// arrivals are then a constant rate's (Arrivals treats it so, exactly).
func (p *Profile) Constant() bool {
	for _, s := range p.segs {
		if s.A != p.segs[0].A || s.B != p.segs[0].A {
			return false
		}
	}
	return true
}

// SpanS is the profile's period in seconds.
func (p *Profile) SpanS() float64 { return p.spanS }

// Mean is the profile's mean rate over a period, in requests per second.
func (p *Profile) Mean() float64 { return p.mass / p.spanS }

// Peak is the profile's highest rate.
func (p *Profile) Peak() float64 {
	peak := 0.0
	for _, s := range p.segs {
		peak = math.Max(peak, math.Max(s.A, s.B))
	}
	return peak
}

// Trough is the profile's lowest rate.
func (p *Profile) Trough() float64 {
	low := math.Inf(1)
	for _, s := range p.segs {
		low = math.Min(low, math.Min(s.A, s.B))
	}
	return low
}

// RateAt returns the profile's rate t seconds from the start.
func (p *Profile) RateAt(t float64) float64 {
	t = math.Mod(t, p.spanS)
	i := sort.Search(len(p.segs), func(i int) bool { return p.segs[i].StartS+p.segs[i].WidthS > t }) // the segment holding t
	s := p.segs[min(i, len(p.segs)-1)]
	return s.A + (s.B-s.A)*(t-s.StartS)/s.WidthS
}

// Requests returns the requests expected in the first t seconds at the
// profile's own rates (its cumulative rate).
func (p *Profile) Requests(t float64) float64 {
	periods := math.Floor(t / p.spanS)
	t -= periods * p.spanS
	i := sort.Search(len(p.segs), func(i int) bool { return p.segs[i].StartS+p.segs[i].WidthS > t })
	i = min(i, len(p.segs)-1)
	s := p.segs[i]
	return periods*p.mass + s.Cum + s.massAt(math.Min(t-s.StartS, s.WidthS))
}

// Time returns when the m-th request (m a real number ≥ 0) arrives at the
// profile's own rates: the inverse of Requests.
func (p *Profile) Time(m float64) float64 {
	periods := math.Floor(m / p.mass)
	m -= periods * p.mass
	// The first segment whose end holds more than m requests.
	i := sort.Search(len(p.segs), func(i int) bool {
		s := p.segs[i]
		return s.Cum+s.massAt(s.WidthS) > m
	})
	if i == len(p.segs) {
		return (periods + 1) * p.spanS
	}
	s := p.segs[i]
	return periods*p.spanS + s.StartS + s.timeOf(m-s.Cum)
}

// Warp returns the arrival time of a request that arrives at u in the
// unit-rate sequence when the profile is scaled to a mean of rps requests
// per second.
func (p *Profile) Warp(u, rps float64) float64 {
	return p.Time(u * p.Mean() / rps)
}

// String describes the profile in one line, with its mean, peak and
// trough.
func (p *Profile) String() string {
	return fmt.Sprintf("%s (mean %.4g, peak %.4g, trough %.4g req/s, period %s)", p.Name, p.Mean(), p.Peak(), p.Trough(), SecondsText(p.spanS))
}

// SecondsText writes seconds in the largest whole unit: 24h, 90m, else
// seconds (45s, 0.5s).
func SecondsText(s float64) string {
	for _, u := range []struct {
		name string
		s    float64
	}{{"h", 3600}, {"m", 60}} {
		if s >= u.s && s/u.s == math.Trunc(s/u.s) {
			return strconv.FormatFloat(s/u.s, 'g', -1, 64) + u.name
		}
	}
	return strconv.FormatFloat(s, 'g', 6, 64) + "s"
}

// IsProfileSpec reports whether a --rate-profile value is a built-in
// form (diurnal:…, trace, trace:…) rather than a file name.
func IsProfileSpec(s string) bool {
	return strings.HasPrefix(s, "diurnal:") || s == "trace" || strings.HasPrefix(s, "trace:")
}

// Diurnal returns the profile that swings between trough and peak
// requests per second as a cosine with the given period, at its peak
// phaseS seconds into each period (tabulated every period/1440, linearly
// between: the rate within 3·10⁻⁶ of the cosine's swing).
func Diurnal(peak, trough, periodS, phaseS float64) (*Profile, error) {
	switch {
	case !(trough >= 0) || math.IsInf(trough, 0):
		return nil, fmt.Errorf("diurnal: trough %v is not a rate ≥ 0", trough)
	case !(peak >= trough) || math.IsInf(peak, 0) || !(peak > 0):
		return nil, fmt.Errorf("diurnal: peak %v must be positive and at least the trough %v", peak, trough)
	case peak > MaxProfileRPS:
		return nil, fmt.Errorf("diurnal: peak %v req/s is beyond any service (at most %g)", peak, MaxProfileRPS)
	case !(periodS > 0) || math.IsInf(periodS, 0):
		return nil, fmt.Errorf("diurnal: period %v is not a positive duration", periodS)
	case !(phaseS >= 0) || math.IsInf(phaseS, 0):
		return nil, fmt.Errorf("diurnal: phase %v is not a duration ≥ 0", phaseS)
	case phaseS >= periodS:
		return nil, fmt.Errorf("diurnal: phase %s is not shorter than the period %s (the peak comes phase into each period)", SecondsText(phaseS), SecondsText(periodS))
	}
	const n = 1440
	times, rates := make([]float64, n+1), make([]float64, n+1)
	for i := range times {
		t := periodS * float64(i) / n
		times[i] = t
		rates[i] = trough + (peak-trough)*(1+math.Cos(2*math.Pi*(t-phaseS)/periodS))/2
	}
	name := fmt.Sprintf("diurnal:peak=%g,trough=%g,period=%s,phase=%s", peak, trough, SecondsText(periodS), SecondsText(phaseS))
	return newProfile(name, times, rates, true, periodS)
}

// ParseDiurnal reads "diurnal:peak=P,trough=T,period=D[,phase=D]" (rates
// in requests per second, durations as Go durations or seconds; phase
// defaults to 0, the peak at the start).
func ParseDiurnal(spec string) (*Profile, error) {
	body, ok := strings.CutPrefix(spec, "diurnal:")
	if !ok {
		return nil, fmt.Errorf("%q: expected diurnal:peak=RPS,trough=RPS,period=DURATION[,phase=DURATION]", spec)
	}
	vals := map[string]float64{}
	for _, kv := range strings.Split(body, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return nil, fmt.Errorf("%q: %q is not KEY=VALUE (keys: peak, trough, period, phase)", spec, kv)
		}
		var f float64
		var err error
		switch k {
		case "peak", "trough":
			f, err = strconv.ParseFloat(v, 64)
		case "period", "phase":
			f, err = ParseSeconds(v)
		default:
			return nil, fmt.Errorf("%q: unknown key %q (keys: peak, trough, period, phase)", spec, k)
		}
		if err != nil {
			return nil, fmt.Errorf("%q: %s: %v", spec, k, err)
		}
		if _, dup := vals[k]; dup {
			return nil, fmt.Errorf("%q: %s given twice", spec, k)
		}
		vals[k] = f
	}
	for _, k := range []string{"peak", "trough", "period"} {
		if _, ok := vals[k]; !ok {
			return nil, fmt.Errorf("%q: missing %s (diurnal:peak=RPS,trough=RPS,period=DURATION[,phase=DURATION])", spec, k)
		}
	}
	return Diurnal(vals["peak"], vals["trough"], vals["period"], vals["phase"])
}

// ParseSeconds reads a duration: a Go duration (90s, 24h) or a number of
// seconds.
func ParseSeconds(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if d, err := time.ParseDuration(s); err == nil {
		return d.Seconds(), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q is not a duration (24h, 90s) or a number of seconds", s)
	}
	return f, nil
}

// MaxProfileRPS bounds a rate profile's rates (a file's rows, a diurnal
// peak): a million requests a second is beyond any service splitplan
// sizes, and a simulation of two minutes of it beyond what it simulates.
const MaxProfileRPS = 1e6

// ReadProfileFile reads a CSV rate profile: a header naming the columns
// time_s and rps (in either order; other columns are ignored), then one
// row per knot, times from 0 increasing. With linear the rate is
// interpolated between knots and the last knot ends the period; else each
// rate holds until the next knot and the last one for as long as the one
// before it (hourly rates: the last hour lasts an hour). Errors name the
// file and line.
func ReadProfileFile(path string, linear bool) (*Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	line := 0
	ti, ri, ncols := -1, -1, 0
	var times, rates []float64
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		cols := strings.Split(text, ",")
		if ti < 0 {
			for i, c := range cols {
				switch strings.TrimSpace(c) {
				case "time_s":
					ti = i
				case "rps":
					ri = i
				}
			}
			if ti < 0 || ri < 0 {
				return nil, fmt.Errorf("%s:%d: expected a header naming the columns time_s and rps, got %q", path, line, text)
			}
			ncols = len(cols)
			continue
		}
		if len(cols) != ncols {
			return nil, fmt.Errorf("%s:%d: expected the header's %d columns, got %d", path, line, ncols, len(cols))
		}
		t, err1 := strconv.ParseFloat(strings.TrimSpace(cols[ti]), 64)
		r, err2 := strconv.ParseFloat(strings.TrimSpace(cols[ri]), 64)
		switch {
		case err1 != nil || math.IsNaN(t) || math.IsInf(t, 0):
			return nil, fmt.Errorf("%s:%d: time_s %q is not a number of seconds", path, line, cols[ti])
		case err2 != nil || !(r >= 0) || math.IsInf(r, 0):
			return nil, fmt.Errorf("%s:%d: rps %q is not a rate ≥ 0", path, line, cols[ri])
		case r > MaxProfileRPS:
			return nil, fmt.Errorf("%s:%d: rps %q is beyond any service (at most %g req/s)", path, line, cols[ri], MaxProfileRPS)
		case len(times) == 0 && t != 0:
			return nil, fmt.Errorf("%s:%d: the first time_s is %g: a profile starts at 0", path, line, t)
		case len(times) > 0 && !(t > times[len(times)-1]):
			return nil, fmt.Errorf("%s:%d: time_s %g does not increase (after %g)", path, line, t, times[len(times)-1])
		}
		times, rates = append(times, t), append(rates, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(times) < 2 {
		return nil, fmt.Errorf("%s: a rate profile needs at least two rows (time_s,rps), got %d", path, len(times))
	}
	n := len(times)
	kind, span := "steps", times[n-1]+(times[n-1]-times[n-2])
	if linear {
		kind, span = "linear", times[n-1]
	}
	p, err := newProfile(path+" in "+kind, times, rates, linear, span)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// ProfileFromArrivals returns the step profile of the arrivals of a
// timestamped trace: per bin of binS seconds, its requests per second
// (the last bin is whole: a trace ending mid-bin reads low there). name
// names the trace.
func ProfileFromArrivals(name string, reqs []Request, binS float64) (*Profile, error) {
	if !(binS > 0) || math.IsInf(binS, 0) {
		return nil, fmt.Errorf("%s: bin %v is not a positive duration", name, binS)
	}
	if len(reqs) == 0 {
		return nil, fmt.Errorf("%s: no requests to take a rate profile from", name)
	}
	last := reqs[len(reqs)-1].Arrival
	bins := int(math.Floor(last/binS)) + 1
	if bins < 2 {
		return nil, fmt.Errorf("%s: its arrivals span %s, less than two bins of %s: give a shorter bin (trace:bin=5m)", name, SecondsText(last), SecondsText(binS))
	}
	if bins > 1_000_000 {
		return nil, fmt.Errorf("%s: %d bins of %s: give a longer bin", name, bins, SecondsText(binS))
	}
	counts := make([]float64, bins)
	for _, r := range reqs {
		if r.Arrival < 0 {
			return nil, fmt.Errorf("%s: request %d arrives at %gs, before the start", name, r.ID, r.Arrival)
		}
		counts[int(math.Floor(r.Arrival/binS))]++
	}
	times := make([]float64, bins)
	for i := range counts {
		times[i] = float64(i) * binS
		counts[i] /= binS
	}
	return newProfile(fmt.Sprintf("trace:%s,bin=%s", name, SecondsText(binS)), times, counts, false, float64(bins)*binS)
}

// ParseTraceProfileSpec reads "trace" or "trace:bin=DURATION" and returns
// the bin (one hour by default).
func ParseTraceProfileSpec(spec string) (binS float64, err error) {
	if spec == "trace" {
		return 3600, nil
	}
	body, ok := strings.CutPrefix(spec, "trace:")
	k, v, kv := strings.Cut(body, "=")
	if !ok || !kv || k != "bin" {
		return 0, fmt.Errorf("%q: expected trace or trace:bin=DURATION (e.g. trace:bin=5m)", spec)
	}
	if binS, err = ParseSeconds(v); err != nil || !(binS > 0) {
		return 0, fmt.Errorf("%q: bin: expected a positive duration (5m, 3600s)", spec)
	}
	return binS, nil
}
