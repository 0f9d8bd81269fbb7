package report

import (
	"fmt"
	"sort"
	"splitplan/resolve"
	"splitplan/traces"
	"strings"

	"gonum.org/v1/gonum/stat"

	"splitplan/evaluator"
)

// Saturation thresholds: a wait whose median over the last quarter of
// arrivals exceeds its median over the first quarter by more than
// saturationGrowthS and by more than saturationRatio times is a queue that
// grew through the run. A pool that keeps up has waits that fluctuate
// about a steady level (they settle within a few service times of the
// start); one that cannot keep up has a backlog growing with the time
// since the start, (arrival rate − service rate) × t requests.
const (
	saturationGrowthS = 1.0
	saturationRatio   = 2.0
	// saturationMinRequests is the fewest requests per quarter for a
	// median worth comparing.
	saturationMinRequests = 20
)

// PoolWaitTrend is how one pool's queue evolved over a simulation: the
// median wait of the requests that arrived in the first quarter of the
// arrivals' span and in the last.
type PoolWaitTrend struct {
	// Pool names the pool: "prompt", "token" or, for a baseline's
	// machines that run both phases, "baseline".
	Pool string
	// Machines is the pool's size.
	Machines int
	// FirstS and LastS are the median waits in seconds.
	FirstS, LastS float64
}

// Grew reports whether the trend is a queue that grew through the run.
func (p PoolWaitTrend) Grew() bool {
	return p.LastS-p.FirstS > saturationGrowthS && p.LastS > saturationRatio*p.FirstS
}

// WaitTrends measures the queue of each pool of cl over res, a simulation
// of reqs: the prompt wait (arrival to prompt start, the prompt pool's
// queue, or the baseline's) and the decode wait (ready to decode to
// decode start, the token pool's queue). A baseline has one pool: its
// trend is the larger growth of the two. It returns nil when the run is
// too short to tell (fewer than 20 requests in a quarter of the arrivals'
// span).
func WaitTrends(cl resolve.Cluster, reqs []traces.Request, res *evaluator.Result) []PoolWaitTrend {
	if sm := res.Summary; sm != nil {
		return streamedWaitTrends(cl, sm)
	}
	n := min(len(reqs), res.RequestCount())
	if n == 0 {
		return nil
	}
	t0, t1 := reqs[0].Arrival, reqs[0].Arrival
	for _, r := range reqs[:n] {
		t0, t1 = min(t0, r.Arrival), max(t1, r.Arrival)
	}
	q1, q3 := t0+(t1-t0)/4, t1-(t1-t0)/4
	var promptFirst, promptLast, decodeFirst, decodeLast []float64
	for i, r := range reqs[:n] {
		l := res.Latency(i)
		decode := max(l.SchedDelayS-l.QueueS, 0)
		switch {
		case r.Arrival < q1:
			promptFirst, decodeFirst = append(promptFirst, l.QueueS), append(decodeFirst, decode)
		case r.Arrival >= q3:
			promptLast, decodeLast = append(promptLast, l.QueueS), append(decodeLast, decode)
		}
	}
	if len(promptFirst) < saturationMinRequests || len(promptLast) < saturationMinRequests {
		return nil
	}
	prompt := PoolWaitTrend{Pool: "prompt", Machines: cl.Prompt, FirstS: median(promptFirst), LastS: median(promptLast)}
	decode := PoolWaitTrend{Pool: "token", Machines: cl.Token, FirstS: median(decodeFirst), LastS: median(decodeLast)}
	return poolTrends(cl, prompt, decode)
}

// poolTrends is the trends of cl's pools from its prompt and decode
// waits: both for a Splitwise design, the larger growth for a baseline
// (its one pool).
func poolTrends(cl resolve.Cluster, prompt, decode PoolWaitTrend) []PoolWaitTrend {
	if cl.Design.IsBaseline() {
		pick := prompt
		if decode.LastS-decode.FirstS > prompt.LastS-prompt.FirstS {
			pick = decode
		}
		pick.Pool = "baseline"
		pick.Machines = cl.Prompt
		return []PoolWaitTrend{pick}
	}
	return []PoolWaitTrend{prompt, decode}
}

// streamedWaitTrends is WaitTrends of a streamed run (its Summary's
// sketches of the first and last quarter's waits: medians within 0.78%).
func streamedWaitTrends(cl resolve.Cluster, sm *evaluator.Summary) []PoolWaitTrend {
	if sm.EarlyPromptWait.Count() < saturationMinRequests || sm.LatePromptWait.Count() < saturationMinRequests {
		return nil
	}
	prompt := PoolWaitTrend{Pool: "prompt", Machines: cl.Prompt, FirstS: sm.EarlyPromptWait.Quantile(0.5), LastS: sm.LatePromptWait.Quantile(0.5)}
	decode := PoolWaitTrend{Pool: "token", Machines: cl.Token, FirstS: sm.EarlyDecodeWait.Quantile(0.5), LastS: sm.LateDecodeWait.Quantile(0.5)}
	return poolTrends(cl, prompt, decode)
}

// median is the median of xs, which it sorts.
func median(xs []float64) float64 {
	sort.Float64s(xs)
	return stat.Quantile(0.5, stat.Empirical, xs, nil)
}

// SaturationWarning is the warning line of each pool of cl whose load
// it could not sustain in res, a simulation of reqs (its queue grew through
// the run, so the latencies depend on how long the run is), "" when none
// grew. varying says the arrival rate varies over the run (a rate
// profile): a queue then grows where the rate passes what the pool serves,
// and the last quarter's wait is not a trend in the run's length.
func SaturationWarning(cl resolve.Cluster, reqs []traces.Request, res *evaluator.Result, varying bool) string {
	var lines []string
	for _, p := range WaitTrends(cl, reqs, res) {
		if !p.Grew() {
			continue
		}
		if varying {
			lines = append(lines, fmt.Sprintf("warning   the %s pool (%s) falls behind under this rate profile: the median wait of the last quarter of arrivals is %.3g s against %.3g s for the first (a queue builds wherever the rate passes what the pool serves and carries over); add machines to it or lower the rate",
				p.Pool, MachinesText(p.Machines), p.LastS, p.FirstS))
			continue
		}
		lines = append(lines, fmt.Sprintf("warning   the %s pool (%s) cannot sustain this load: its queue grew through the run (median wait %.3g s for the first quarter of arrivals, %.3g s for the last), so every latency here grows with --duration; add machines to it or lower the rate",
			p.Pool, MachinesText(p.Machines), p.FirstS, p.LastS))
	}
	return strings.Join(lines, "\n")
}

// MachinesText is "1 machine" or "N machines".
func MachinesText(n int) string {
	if n == 1 {
		return "1 machine"
	}
	return fmt.Sprintf("%d machines", n)
}
