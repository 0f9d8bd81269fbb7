package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"splitplan/resolve"
	"splitplan/traces"
	"strconv"
	"text/tabwriter"
	"time"

	"splitplan/evaluator"
	"splitplan/slo"
)

// PrintSimulation prints a simulation of reqs: the cluster, the workload
// (source describes it), the latency percentiles, and what the requests
// and machines did. res may have kept latencies only
// (evaluator.Options.LatenciesOnly).
func PrintSimulation(out io.Writer, cl resolve.Cluster, source string, varying bool, opt evaluator.Options, reqs []traces.Request, res *evaluator.Result, elapsed time.Duration) {
	w := bufio.NewWriter(out) // one write, not one per line and cell
	defer w.Flush()
	mode := "splitplan model"
	if opt.Compat {
		mode = "splitwise-sim compatibility"
	}
	fmt.Fprintf(w, "cluster   %s, %s, %.1f $/h, %.1f kW (%s)%s\n", cl, cl.Model.Name, cl.CostUSDPerH(), cl.PowerKW(), mode, PolicyLabel(cl))
	fmt.Fprintf(w, "perf      %s\n", cl.Provenance())
	mem := MemoryText(cl.Model, cl.PromptType, cl.TokenType)
	if opt.Compat {
		mem = ReferenceMemoryText(cl.Model)
	}
	fmt.Fprintf(w, "memory    %s\n", mem)
	fmt.Fprintf(w, "workload  %s\n", source)
	l := slo.Summarize(res)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	title := "\nlatency (s)"
	if res.Summary != nil {
		title = "\nlatency (s), streamed ±0.78%"
	}
	fmt.Fprintln(tw, title+"\tP50\tP90\tP99\tmean\tmax\t")
	row := func(name string, d slo.Dist) {
		if math.IsNaN(d.P50) {
			// No request has the figure (every one had one output token:
			// no gap between tokens).
			fmt.Fprintf(tw, "%s\t—\t—\t—\t—\t—\t\n", name)
			return
		}
		fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t\n", name, d.P50, d.P90, d.P99, d.Mean, d.Max)
	}
	row("TTFT", l.TTFT)
	row("TBT (a request's mean gap)", l.TBT)
	row("TBT (reference: /output)", l.TBTReference)
	row("E2E", l.E2E)
	row("ITL (every gap)", l.ITL)
	row("stall (longest gap)", l.MaxGap)
	row("queueing", l.Queue)
	row("scheduling delay", l.SchedDelay)
	tw.Flush()
	preempted, borrowed := res.Preempted, res.Borrowed
	busy, n := 0.0, 0
	for _, m := range res.Machines {
		busy += m.BusyS
		n++
	}
	util := 0.0
	if res.EndS > 0 && n > 0 {
		util = busy / (res.EndS * float64(n)) * 100
	}
	fmt.Fprintf(w, "\nrequests  %d completed, last at %.2f s; %d KV transfers, %d borrowed, %d preempted at least once\n",
		res.Completed, res.EndS, res.Transfers, borrowed, preempted)
	fmt.Fprintf(w, "machines  %d, %.1f%% busy on average, %d pool moves\n", n, util, res.PoolMoves)
	if res.EnergyKnown {
		draw := fmt.Sprintf(": %.1f kW on average over it (%.0f kWh/day)", res.AverageKW(), res.KWhPerDay())
		if res.ArrivalWindowS > 0 {
			draw = fmt.Sprintf(" (to %.2f s); steady draw %.1f kW (%.0f kWh/day: the machines idle through the arrivals' %.4g s, plus their work above idle)",
				res.EndS, res.AverageKW(), res.KWhPerDay(), res.ArrivalWindowS)
		}
		fmt.Fprintf(w, "energy    %.4g kWh over the run%s, %.4g J per output token, %.4g J per request\n",
			res.EnergyJ/3.6e6, draw, res.JPerOutputToken(), res.JPerRequest())
	} else if cl.PowerNote != "" {
		fmt.Fprintf(w, "energy    unknown (%s)\n", cl.PowerNote)
	}
	fmt.Fprintf(w, "simulated %d events in %s", res.Events, elapsed.Round(time.Microsecond))
	if res.Extrapolations > 0 {
		fmt.Fprintf(w, "; %d iterations extrapolated beyond the profiled range", res.Extrapolations)
	}
	fmt.Fprintln(w)
	if warn := SaturationWarning(cl, reqs, res, varying); warn != "" {
		fmt.Fprintln(w, warn)
	}
}

// PolicyLabel describes cl's batching policy for the cluster line of a
// report: "" for the default mixed batching; for sarathi with the token
// budget of cl's machine types.
func PolicyLabel(cl resolve.Cluster) string {
	p := cl.Policy
	if p.IsDefault() {
		return ""
	}
	if p.Kind != evaluator.PolicySarathi {
		return ", " + p.String() + " batching"
	}
	pb, tb, err := evaluator.SarathiBudgets(cl.Sim())
	if err != nil {
		return ", sarathi batching"
	}
	budget := strconv.Itoa(pb)
	if tb != pb {
		budget += "/" + strconv.Itoa(tb)
	}
	if p.TBTSLOS > 0 {
		return ", sarathi batching (" + budget + "-token budget from a " + strconv.FormatFloat(p.TBTSLOS, 'g', -1, 64) + " s TBT SLO)"
	}
	return ", sarathi batching (" + budget + "-token budget)"
}
