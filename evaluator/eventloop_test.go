package evaluator

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"splitplan/traces"
)

// codingHH35x5 is BenchmarkCoding70HH35x5's workload (coding, 70 req/s,
// 120 s) and cluster (Splitwise-HH 35P/5T).
func codingHH35x5(b *testing.B) ([]traces.Request, Cluster) {
	d, err := traces.Builtin("coding")
	if err != nil {
		b.Fatal(err)
	}
	reqs, err := traces.Synthesize(d, 70, 120, 0, false)
	if err != nil {
		b.Fatal(err)
	}
	cl, err := TestCluster("HH", 35, 5, "bloom-176b", false)
	if err != nil {
		b.Fatal(err)
	}
	return reqs, cl
}

// BenchmarkBareEventLoop is the floor of the simulator's cost per event:
// the event loop of run with the same heap and the same arrivals
// (coding, 70 req/s, 120 s) and a machine per event as in Splitwise-HH
// 35P/5T, but no scheduling: each of the 40 machines has one run-end
// event pending, and handling one schedules that machine's next after a
// random duration, as many events as the simulation of
// BenchmarkCoding70HH35x5 handles. Compare its events/s with the
// simulation's (events/op over the time per op).
func BenchmarkBareEventLoop(b *testing.B) {
	reqs, cl := codingHH35x5(b)
	s, err := newSim(cl, reqs, Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.run(b.Context()); err != nil {
		b.Fatal(err)
	}
	events := int(s.out.Events)
	const machines = 40
	rng := rand.New(rand.NewPCG(1, 2))
	durs := make([]float64, 4096)
	for i := range durs {
		durs[i] = 0.01 + 0.2*rng.Float64()
	}
	runtime.GC() // (as BenchmarkCoding70HH35x5Loop collects its set-up's garbage)
	b.ResetTimer()
	var handled int
	for i := 0; i < b.N; i++ {
		q := newEventQueue(machines, 2*machines+16)
		for m := 0; m < machines; m++ {
			q.push(event{t: durs[m], who: int32(m), kind: evIterEnd})
		}
		next, k := 0, 0
		handled = 0
		for handled < events {
			if next < len(reqs) && reqs[next].Arrival < q.ev[0].t {
				next++
				handled++
				continue
			}
			e := q.pop()
			k++
			q.push(event{t: e.t + durs[k&4095], who: e.who, ver: e.ver + 1, kind: evIterEnd})
			handled++
		}
	}
	b.ReportMetric(float64(handled)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(handled), "events/op")
}

// BenchmarkCoding70HH35x5Loop is the event loop of
// BenchmarkCoding70HH35x5 alone, as BenchmarkBareEventLoop times its own:
// the simulator's setup (its machines, the result's 8,400 records
// allocated and their pages touched) and the result's assembly are left
// out of the timer, and so is the collection of their garbage. Its
// events/s is the figure to hold against the bare loop's;
// BenchmarkCoding70HH35x5 gives the whole simulation's.
func BenchmarkCoding70HH35x5Loop(b *testing.B) { benchLoop(b, Options{}) }

// BenchmarkCoding70HH35x5SearchLoop is BenchmarkCoding70HH35x5Loop as a
// search simulates: keeping of each request only what the SLO check reads
// (Options.LatenciesOnly), 48 bytes instead of its 128-byte result.
func BenchmarkCoding70HH35x5SearchLoop(b *testing.B) { benchLoop(b, Options{LatenciesOnly: true}) }

// BenchmarkCoding70HH35x5LoopSetup is what BenchmarkCoding70HH35x5Loop
// does outside its timer (the simulator's set-up and the collection of
// its garbage) and nothing else: an instruction count of the loop alone
// (scripts/events-ratio.sh, with valgrind) subtracts this one's from it.
func BenchmarkCoding70HH35x5LoopSetup(b *testing.B) { benchLoopRun(b, Options{}, false) }

// benchLoop times the event loop of BenchmarkCoding70HH35x5 with opts.
func benchLoop(b *testing.B, opts Options) { benchLoopRun(b, opts, true) }

// benchLoopRun is benchLoop, whose simulations run only when run is set.
func benchLoopRun(b *testing.B, opts Options, run bool) {
	reqs, cl := codingHH35x5(b)
	b.ReportAllocs()
	b.ResetTimer()
	var events int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s, err := newSim(cl, reqs, opts)
		if err != nil {
			b.Fatal(err)
		}
		// The set-up's garbage (the previous simulation's result and
		// state) is collected before the timer starts: otherwise the
		// collections its megabytes trigger run inside the timed loop,
		// which allocates a few kilobytes itself.
		runtime.GC()
		b.StartTimer()
		if !run {
			continue
		}
		if err := s.run(b.Context()); err != nil {
			b.Fatal(err)
		}
		events = s.out.Events
	}
	if run {
		b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		b.ReportMetric(float64(events), "events/op")
	}
}
