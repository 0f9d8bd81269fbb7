package htmlreport

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"splitplan/evaluator"
	"splitplan/report"
	"splitplan/resolve"
	"splitplan/search"
	"splitplan/slo"
)

// yCap is how far above its SLO limit a latency panel's y axis reaches,
// as in the --plot figures.
const yCap = 4

// Load builds the report of a sweep or an evaluate run: the question is
// given (the command's workload, model and SLO lines), the table is the
// load CSV (--out), the figures one latency panel per SLO target with the
// clusters' lines and the limit dashed.
func Load(command string, question []Field, rows []search.LoadRow, spec slo.Spec, title string, m Meta) (*Report, error) {
	r := &Report{Title: "splitplan " + command + ": " + title, Question: append([]Field{{Label: "command", Text: command}}, question...),
		Command: m.Command, Version: m.Version}
	r.Question = append(r.Question, sloField(spec, ""))
	r.Answer = loadAnswer(rows)
	t, err := TableOf("load", command+" --out", func(w io.Writer) error { return report.WriteLoadCSV(w, rows) })
	if err != nil {
		return nil, err
	}
	r.Tables = append(r.Tables, t)
	fig := report.LatencyFigure(rows, spec, title, "")
	var charts []Figure
	for k, panel := range fig.Panels {
		c := &Chart{ID: fmt.Sprintf("load-%d", k), Title: panel.Name + " against load", XLabel: "offered load (req/s)", YLabel: panel.Name + " " + panel.YLabel, YMin0: true}
		for _, s := range fig.Series {
			ser := Series{Name: s.Name, Line: true, Markers: true}
			for i, x := range s.X {
				if k < len(s.Y) && i < len(s.Y[k]) {
					y := s.Y[k][i]
					ser.Points = append(ser.Points, Pt{X: x, Y: y, Tip: fmt.Sprintf("%s\nat %s req/s: %s %s %s", s.Name, num(x), panel.Name, num(y), panel.YLabel)})
				}
			}
			c.Series = append(c.Series, ser)
		}
		if panel.Limit > 0 {
			c.YMax = yCap * panel.Limit
			c.Note = fmt.Sprintf("The y axis stops at %g× the limit: a point beyond it is drawn at the top edge (hover it for its value).", float64(yCap))
			lim := Series{Name: "SLO limit", Line: true, Dashed: true, Colour: "#000000"}
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, s := range fig.Series {
				for _, x := range s.X {
					lo, hi = math.Min(lo, x), math.Max(hi, x)
				}
			}
			if !math.IsInf(lo, 0) {
				lim.Points = []Pt{{X: lo, Y: panel.Limit}, {X: hi, Y: panel.Limit}}
				c.Series = append(c.Series, lim)
			}
		}
		charts = append(charts, c)
	}
	r.Sections = append(r.Sections, Section{Title: "Latency against load",
		Note:    "One panel per SLO target; hover a point for its value. A gap is a rate the cluster could not sustain (the run was aborted).",
		Figures: charts})
	return r, nil
}

// loadAnswer says, per cluster, the highest rate simulated at which it
// met every SLO.
func loadAnswer(rows []search.LoadRow) string {
	var order []string
	best := map[string]float64{}
	for _, row := range rows {
		if _, ok := best[row.Cluster]; !ok {
			order = append(order, row.Cluster)
			best[row.Cluster] = math.NaN()
		}
		if !row.Aborted && row.Pass() && (math.IsNaN(best[row.Cluster]) || row.RPS > best[row.Cluster]) {
			best[row.Cluster] = row.RPS
		}
	}
	var parts []string
	for _, c := range order {
		if math.IsNaN(best[c]) {
			parts = append(parts, c+" meets the SLOs at none of the rates")
		} else {
			parts = append(parts, fmt.Sprintf("%s meets every SLO up to %s req/s", c, num(best[c])))
		}
	}
	return "Of the rates simulated: " + strings.Join(parts, "; ") + "."
}

// cdfPoints is at most n points of the empirical CDF of values (sorted
// in place): each point a value and the fraction at or below it.
func cdfPoints(values []float64, n int, name, unit string) []Pt {
	sort.Float64s(values)
	if len(values) == 0 {
		return nil
	}
	var out []Pt
	step := math.Max(1, float64(len(values))/float64(n))
	last := -1
	for f := 0.0; ; f += step {
		i := int(math.Round(f))
		if i >= len(values) {
			break
		}
		for i+1 < len(values) && values[i+1] == values[i] {
			i++
		}
		if i <= last {
			continue
		}
		last = i
		frac := float64(i+1) / float64(len(values))
		out = append(out, Pt{X: values[i], Y: frac, Tip: fmt.Sprintf("%s ≤ %s %s for %.1f%% of requests", name, num(values[i]), unit, frac*100)})
	}
	if last != len(values)-1 {
		v := values[len(values)-1]
		out = append(out, Pt{X: v, Y: 1, Tip: fmt.Sprintf("%s ≤ %s %s for 100%% of requests", name, num(v), unit)})
	}
	return out
}

// Simulate builds the report of a simulate run: printed is the command's
// printed report (report.PrintSimulation's text), whose labelled lines are
// the question; the table is the machines CSV (--machines-out); the
// figures the requests' latency CDFs and each machine's busy share.
func Simulate(cl resolve.Cluster, res *evaluator.Result, printed string, m Meta) (*Report, error) {
	fields, _ := textFields(printed)
	r := &Report{Title: "splitplan simulate: " + cl.String(), Question: append([]Field{{Label: "command", Text: "simulate one cluster"}}, fields...),
		Command: m.Command, Version: m.Version}
	l := slo.Summarize(res)
	busy := 0.0
	for _, mc := range res.Machines {
		busy += mc.BusyS
	}
	util := 0.0
	if res.EndS > 0 && len(res.Machines) > 0 {
		util = busy / (res.EndS * float64(len(res.Machines))) * 100
	}
	r.Answer = fmt.Sprintf("%s served %d requests: P99 TTFT %.3g s, P99 E2E %.3g s, P99 TBT %.3g s; its %d machines were %.1f%% busy on average.",
		cl.String(), res.Completed, l.TTFT.P99, l.E2E.P99, l.TBT.P99, len(res.Machines), util)
	t, err := TableOf("machines", "simulate --machines-out", func(w io.Writer) error { return evaluator.WriteMachinesCSV(w, res) })
	if err != nil {
		return nil, err
	}
	r.Tables = append(r.Tables, t)
	n := res.RequestCount()
	ttft, e2e, tbt := make([]float64, 0, n), make([]float64, 0, n), make([]float64, 0, n)
	for i := 0; i < n; i++ {
		lat := res.Latency(i)
		if lat.E2ES <= 0 {
			continue // not finished (an aborted run)
		}
		ttft, e2e = append(ttft, lat.TTFTS), append(e2e, lat.E2ES)
		if lat.OutputTokens > 1 {
			tbt = append(tbt, lat.MaxGapS)
		}
	}
	var figs []Figure
	if len(e2e) > 0 {
		c := &Chart{ID: "cdf-latency", Title: "Request latency CDFs", XLabel: "latency (s, log scale)", YLabel: "fraction of requests at or below", LogX: true, YMin0: true}
		c.Series = append(c.Series,
			Series{Name: fmt.Sprintf("TTFT (%d requests)", len(ttft)), Step: true, Markers: true, Points: cdfPoints(ttft, 150, "TTFT", "s")},
			Series{Name: fmt.Sprintf("E2E (%d requests)", len(e2e)), Step: true, Markers: true, Points: cdfPoints(e2e, 150, "E2E", "s")},
			Series{Name: fmt.Sprintf("longest gap between tokens (%d requests)", len(tbt)), Step: true, Markers: true, Points: cdfPoints(tbt, 150, "stall", "s")})
		figs = append(figs, c)
	}
	if len(res.Machines) > 0 && res.EndS > 0 {
		b := &Bars{ID: "busy", Title: "Busy share of each machine over the run", XLabel: "busy (% of the run)"}
		pools := map[evaluator.Pool][2]float64{}
		var order []evaluator.Pool
		for _, mc := range res.Machines {
			if _, ok := pools[mc.Pool]; !ok {
				order = append(order, mc.Pool)
			}
			pools[mc.Pool] = [2]float64{pools[mc.Pool][0] + mc.BusyS, pools[mc.Pool][1] + 1}
		}
		sort.Slice(order, func(i, j int) bool { return order[i] < order[j] })
		for _, p := range order {
			v := pools[p][0] / (pools[p][1] * res.EndS) * 100
			b.Names = append(b.Names, fmt.Sprintf("%s pool, mean of %d", p, int(pools[p][1])))
			b.Values = append(b.Values, v)
			b.Tips = append(b.Tips, fmt.Sprintf("%s pool: %d machines, %.1f%% busy on average over %.1f s", p, int(pools[p][1]), v, res.EndS))
		}
		if len(res.Machines) <= 48 {
			for _, mc := range res.Machines {
				v := mc.BusyS / res.EndS * 100
				b.Names = append(b.Names, fmt.Sprintf("#%d %s %s", mc.ID, mc.Type, mc.Pool))
				b.Values = append(b.Values, v)
				b.Tips = append(b.Tips, fmt.Sprintf("machine %d, %s, %s pool: busy %.1f s of %.1f s (%.1f%%)", mc.ID, mc.Type, mc.Pool, mc.BusyS, res.EndS, v))
			}
		}
		b.Note = "The simulator keeps each machine's total busy time, not a time series: per-pool load over time is not available, so this shows each pool's and machine's share of the run."
		figs = append(figs, b)
	}
	r.Sections = append(r.Sections, Section{Title: "Latencies and load", Note: "Hover a step of a CDF or a bar for its value.", Figures: figs})
	return r, nil
}
