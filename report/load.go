package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"splitplan/plots"
	"splitplan/resolve"
	"splitplan/search"
	"splitplan/slo"
	"splitplan/traces"
)

// LoadRow is one cluster at one rate (search.RunLoad's row).
type LoadRow = search.LoadRow

// NineTargets are P50/P90/P99 of TTFT, TBT and E2E, in CSV column order.
func NineTargets() []slo.Target { return slo.Default().Targets }

// LatencyFigure draws the SLO figures of rows: one panel per SLO target
// (slowdown targets against their factor, absolute ones in seconds), one
// line per cluster.
func LatencyFigure(rows []LoadRow, spec slo.Spec, title, subtitle string) plots.LatencyFigure {
	f := plots.LatencyFigure{Title: title, Subtitle: subtitle}
	col := make([]int, len(spec.Targets))
	for i, t := range spec.Targets {
		col[i] = -1
		for k, n := range NineTargets() {
			if n.Key() == t.Key() {
				col[i] = k
			}
		}
		p := plots.LatencyPanel{Name: t.Name(), YLabel: "slowdown (× reference)", Limit: t.Factor}
		if t.AbsoluteS > 0 {
			p.YLabel, p.Limit = "latency (s)", t.AbsoluteS
		}
		f.Panels = append(f.Panels, p)
	}
	idx := map[string]int{}
	for _, r := range rows {
		i, ok := idx[r.Cluster]
		if !ok {
			i = len(f.Series)
			idx[r.Cluster] = i
			f.Series = append(f.Series, plots.LatencySeries{Name: r.Cluster, Y: make([][]float64, len(spec.Targets))})
		}
		s := &f.Series[i]
		s.X = append(s.X, r.RPS)
		for k, t := range spec.Targets {
			v := math.NaN()
			switch {
			case r.Aborted || col[k] < 0:
			case t.AbsoluteS > 0:
				v = r.Seconds[col[k]]
			default:
				v = r.Slowdowns[col[k]]
			}
			s.Y[k] = append(s.Y[k], v)
		}
	}
	return f
}

// LoadCSVHeader is the header of sweep and evaluate CSVs.
var LoadCSVHeader = func() []string {
	h := []string{"cluster", "rps"}
	for _, t := range NineTargets() {
		h = append(h, t.Key()+"_s")
	}
	for _, t := range NineTargets() {
		h = append(h, t.Key()+"_slowdown")
	}
	return append(h, "slo_pass", "binding_slo", "avg_kw", "j_per_output_token", "verified_s", "verified_pass", "verified_slo", "verified_slack",
		"scenarios_passed", "scenarios", "scenario_avg_kw_p10", "scenario_avg_kw_p50", "scenario_avg_kw_p90", "scenario_avg_kw_known")
}()

// loadRequired are the columns ReadLoadCSV needs: the energy,
// verification and scenario columns, added last, are optional (older
// files lack them).
var loadRequired = strings.Join(LoadCSVHeader[:len(LoadCSVHeader)-12], ",")

// scenarioDrawColumns are the sweep CSV's columns of a row's draw across
// the scenarios (search.ScenarioCount.KW, KWKnown).
var scenarioDrawColumns = LoadCSVHeader[len(LoadCSVHeader)-4:]

// WriteLoadCSV writes one row per cluster and rate (sweep and evaluate --out).
func WriteLoadCSV(w io.Writer, rows []LoadRow) error {
	cw := csv.NewWriter(w)
	cw.Write(LoadCSVHeader)
	num := func(v float64) string {
		if !finite(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	for _, r := range rows {
		rec := []string{r.Cluster, num(r.RPS)}
		for _, v := range r.Seconds {
			rec = append(rec, num(v))
		}
		for _, v := range r.Slowdowns {
			rec = append(rec, num(v))
		}
		rec = append(rec, strconv.FormatBool(r.Verdict.Pass), bindingKey(r.Verdict), num(r.AverageKW), num(r.JPerOutputToken))
		if v := r.Verified; v != nil {
			key, slack := verificationBinding(v)
			rec = append(rec, num(v.DurationS), strconv.FormatBool(v.Pass), key, slack)
		} else {
			rec = append(rec, "", "", "", "")
		}
		if sc := r.Scenarios; sc != nil {
			kw := [3]string{}
			if sc.KWKnown > 0 {
				kw = [3]string{num(sc.KW[0]), num(sc.KW[1]), num(sc.KW[2])}
			}
			rec = append(rec, strconv.Itoa(sc.Passed), strconv.Itoa(sc.Of), kw[0], kw[1], kw[2], strconv.Itoa(sc.KWKnown))
		} else {
			rec = append(rec, "", "", "", "", "", "")
		}
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

func bindingKey(v slo.Verdict) string {
	if !v.Drained {
		return "drain"
	}
	if len(v.Figures) == 0 {
		return ""
	}
	return v.BindingFigure().Key()
}

// PrintLoadTable prints rows as a table, then for each cluster the highest
// rate tried that met every SLO.
func PrintLoadTable(w io.Writer, clusters []resolve.Cluster, rows []LoadRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	scen := slices.ContainsFunc(rows, func(r LoadRow) bool { return r.Scenarios != nil })
	head := "\nCLUSTER\tREQ/S\tP99 TTFT s\tP99 TBT s\tP99 E2E s\tAVG kW\tSLO\t"
	if scen {
		head += "SCENARIOS\tkW P10–P90\t"
	}
	fmt.Fprintln(tw, head+"BINDING (measured/limit)\t")
	sec := func(v float64) string { return fixedOr(v, 3, "—") }
	for _, r := range rows {
		verdict, binding := "pass", ""
		if !r.Pass() {
			verdict = "FAIL"
		}
		if !r.Verdict.Drained {
			note, _, _ := strings.Cut(r.Verdict.DrainNote, ":")
			binding = "unsustainable (" + note + ")"
		} else if len(r.Verdict.Figures) > 0 {
			f := r.Verdict.BindingFigure()
			binding = f.Name() + " " + FigureText(f)
		}
		if v := r.Verified; v != nil && !v.Pass {
			// (Met every SLO over its run, not over the longer one.)
			binding += "; " + checkFailedText(v)
		}
		kw := "—"
		if finite(r.AverageKW) {
			kw = fmt.Sprintf("%.1f", r.AverageKW)
		}
		if scen {
			verdict += "\t" + scenariosText(r.Scenarios) + "\t" + drawText(r.Scenarios)
		}
		fmt.Fprintf(tw, "%s\t%g\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Cluster, r.RPS, sec(r.Seconds[2]), sec(r.Seconds[5]), sec(r.Seconds[8]), kw, verdict, binding)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, cl := range clusters {
		best := math.NaN()
		var at *search.ScenarioCount
		for _, r := range rows {
			if r.Cluster == cl.String() && r.Pass() && !(r.RPS <= best) {
				best, at = r.RPS, r.Scenarios
			}
		}
		if math.IsNaN(best) {
			fmt.Fprintf(w, "%-24s meets every SLO at none of the rates tried\n", cl.String())
			continue
		}
		there := ""
		if at != nil {
			there = fmt.Sprintf("; there in %d of the %d scenarios", at.Passed, at.Of)
			if d := drawText(at); d != "—" {
				there += ", drawing " + d + " kW (P10–P90"
				if at.KWKnown < at.Of {
					there += fmt.Sprintf(" of the %d whose runs did not abort", at.KWKnown)
				}
				there += ")"
			}
		}
		fmt.Fprintf(w, "%-24s highest rate tried that meets every SLO: %g req/s ($%.1f/h, %.1f kW)%s\n", cl.String(), best, cl.CostUSDPerH(), cl.PowerKW(), there)
	}
}

// drawText is a row's draw across its scenarios, P10–P90 in kW
// ("131.9–137.2"; — where none is known).
func drawText(c *search.ScenarioCount) string {
	if c == nil || c.KWKnown == 0 || !finite(c.KW[0]) || !finite(c.KW[2]) {
		return "—"
	}
	return fmt.Sprintf("%.1f–%.1f", c.KW[0], c.KW[2])
}

// scenariosText is a row's SCENARIOS cell: "27/32" (— where none were
// judged).
func scenariosText(c *search.ScenarioCount) string {
	if c == nil {
		return "—"
	}
	return fmt.Sprintf("%d/%d", c.Passed, c.Of)
}

// LoadScenariosText says how the rows were judged in a robust search's
// scenarios (search.ScenarioLoad; "" when they were not): how many, drawn
// how, over which runs, and the simulations it took.
func LoadScenariosText(rows []LoadRow, w *search.Workload, verifyS float64, sims int) string {
	n := 0
	for _, r := range rows {
		if r.Scenarios != nil {
			n = r.Scenarios.Of
			break
		}
	}
	if n == 0 {
		return ""
	}
	over := "its " + traces.SecondsText(w.DurationS)
	if verifyS > w.DurationS {
		over += fmt.Sprintf(" and, where it held, that traffic continued to %s", traces.SecondsText(verifyS))
	}
	return fmt.Sprintf("every row judged in %d scenarios drawn as optimize --confidence draws them from seed %d (each one draw of the performance model's validated error per GPU and phase and one workload seed), over %s (%s): SCENARIOS counts those in which it met every SLO, kW P10–P90 gives its average draw over its %s in them, passing or not",
		n, w.Seed, over, plural(sims, "simulation", "simulations"), traces.SecondsText(w.DurationS))
}

// ReadLoadCSV reads a file written by sweep or evaluate --out.
func ReadLoadCSV(path string) ([]LoadRow, error) {
	// The energy columns, added last, are optional: older files lack them.
	t, err := readCSVTable(path, loadRequired, "a sweep CSV (sweep --out or evaluate --out)")
	if err != nil {
		return nil, err
	}
	const what = "a sweep CSV"
	energy, err := t.together(what, "avg_kw", "j_per_output_token")
	if err != nil {
		return nil, err
	}
	verified, err := t.together(what, "verified_s", "verified_pass")
	if err != nil {
		return nil, err
	}
	counts := []string{"scenarios_passed", "scenarios"}
	scen, err := t.together(what, counts...)
	if err != nil {
		return nil, err
	}
	draws, err := t.together(what, scenarioDrawColumns...)
	if err == nil && draws { // (the draws come with the counts, which older files have alone)
		_, err = t.together(what, append(counts, scenarioDrawColumns...)...)
	}
	if err != nil {
		return nil, err
	}
	var out []LoadRow
	for i := range t.rows {
		c := t.row(i)
		r := LoadRow{Cluster: c.str("cluster"), RPS: c.num("rps", false)}
		for k, tg := range NineTargets() {
			r.Seconds[k] = c.num(tg.Key()+"_s", true)
			r.Slowdowns[k] = c.num(tg.Key()+"_slowdown", true)
		}
		r.Verdict.Pass = c.boolean("slo_pass")
		r.AverageKW, r.JPerOutputToken = math.NaN(), math.NaN()
		if energy {
			r.AverageKW, r.JPerOutputToken = c.num("avg_kw", true), c.num("j_per_output_token", true)
		}
		r.Aborted = math.IsNaN(r.Slowdowns[0])
		if verified && c.str("verified_pass") != "" {
			// (The check's length and verdict; its binding figure is
			// not kept, as the row's own is not.)
			r.Verified = &search.Verification{DurationS: c.num("verified_s", false), Pass: c.boolean("verified_pass")}
		}
		if scen && c.str("scenarios")+c.str("scenarios_passed") != "" {
			sc := &search.ScenarioCount{Passed: c.integer("scenarios_passed"), Of: c.integer("scenarios")}
			if c.err == nil && sc.Of < 1 {
				c.fail("scenarios", "a whole number of one or more")
			}
			if c.err == nil && sc.Passed > sc.Of {
				c.fail("scenarios_passed", fmt.Sprintf("at most the scenarios (%d)", sc.Of))
			}
			sc.KW = [3]float64{math.NaN(), math.NaN(), math.NaN()}
			if draws && c.err == nil {
				readDraws(c, sc)
			}
			r.Scenarios = sc
		}
		if c.err != nil {
			return nil, c.err
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, inputf("%s: no rows: the file has a header only", path)
	}
	return out, nil
}

// readDraws reads a row's draw across its scenarios into sc: the count
// of scenarios with a known draw (at most sc.Of), and P10 ≤ P50 ≤ P90 in
// kW, present exactly when that count is not 0.
func readDraws(c *cellReader, sc *search.ScenarioCount) {
	sc.KWKnown = c.integer("scenario_avg_kw_known")
	if c.err == nil && sc.KWKnown > sc.Of {
		c.fail("scenario_avg_kw_known", fmt.Sprintf("at most the scenarios (%d)", sc.Of))
	}
	for j, col := range scenarioDrawColumns[:3] {
		sc.KW[j] = c.num(col, true)
		if c.err == nil && math.IsNaN(sc.KW[j]) != (sc.KWKnown == 0) {
			want := "a draw in kW, as scenario_avg_kw_known is not 0"
			if sc.KWKnown == 0 {
				want = "empty, as scenario_avg_kw_known is 0"
			}
			c.fail(col, want)
		}
		if c.err == nil && j > 0 && sc.KW[j] < sc.KW[j-1] {
			c.fail(col, fmt.Sprintf("at least %s (%g)", scenarioDrawColumns[j-1], sc.KW[j-1]))
		}
	}
}

// PrintAttainmentTable prints, for each cluster and rate, the fraction of
// requests meeting every goodput limit of spec scaled by each of scales
// (sweep --slo-scale), and the scale from which the attainment target
// holds.
func PrintAttainmentTable(w io.Writer, spec slo.Spec, scales []float64, rows []LoadRow) {
	g := spec.Goodput
	limits := make([]string, len(g.Limits))
	for i, l := range g.Limits {
		limits[i] = l.String()
	}
	fmt.Fprintf(w, "\ngoodput attainment with the per-request limits (%s) scaled by each factor; target %g%%\n",
		strings.Join(limits, ", "), 100*g.Attainment)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "CLUSTER\tREQ/S")
	for _, k := range scales {
		fmt.Fprintf(tw, "\t×%g", k)
	}
	fmt.Fprintln(tw, "\tMEETS FROM\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%g", r.Cluster, r.RPS)
		from := "—"
		for k, a := range r.Attainment {
			if math.IsNaN(a) {
				fmt.Fprint(tw, "\t—")
				continue
			}
			fmt.Fprintf(tw, "\t%.1f%%", 100*a)
			if from == "—" && a >= g.Attainment {
				from = fmt.Sprintf("×%g", scales[k])
			}
		}
		fmt.Fprintf(tw, "\t%s\t\n", from)
	}
	tw.Flush()
}

// AttainmentFigure is the goodput attainment against the SLO scale (sweep
// --slo-scale --plot): one line per cluster and rate, the target dashed.
func AttainmentFigure(rows []LoadRow, spec slo.Spec, scales []float64, subtitle string) plots.LatencyFigure {
	f := plots.LatencyFigure{Title: "Goodput attainment vs SLO scale", Subtitle: subtitle, XLabel: "SLO scale (× every per-request limit)",
		Panels: []plots.LatencyPanel{{Name: "requests meeting every limit", YLabel: "attainment (%)", Limit: 100 * spec.Goodput.Attainment}}}
	for _, r := range rows {
		s := plots.LatencySeries{Name: fmt.Sprintf("%s @ %g req/s", r.Cluster, r.RPS), X: scales, Y: [][]float64{make([]float64, len(r.Attainment))}}
		for k, a := range r.Attainment {
			s.Y[0][k] = 100 * a
		}
		f.Series = append(f.Series, s)
	}
	return f
}

// verificationBinding is a check's binding SLO key and its slack: "drain"
// for a run that did not drain, the limit a stopped run certainly failed
// (its slack empty), "" when neither is known.
func verificationBinding(v *search.Verification) (key, slack string) {
	switch {
	case v.Verdict != nil && !v.Verdict.Drained:
		return "drain", ""
	case v.Verdict != nil && len(v.Verdict.Figures) > 0:
		f := v.Verdict.BindingFigure()
		return f.Key(), ff(f.Slack)
	case v.StopLimit != "":
		return v.StopLimit, ""
	}
	return "", ""
}

// LoadVerifiedText says how the rows' check over a longer run came out
// (search.VerifyLoad; "" when none ran): how many rows that met every SLO
// over their own run were checked, and which did not hold.
func LoadVerifiedText(rows []LoadRow, durationS float64) string {
	checked, failed := 0, 0
	verifyS := 0.0
	for _, r := range rows {
		if r.Verified != nil {
			checked++
			verifyS = r.Verified.DurationS
			if !r.Verified.Pass {
				failed++
			}
		}
	}
	if checked == 0 {
		return ""
	}
	over := fmt.Sprintf("every row that met every SLO over %s was checked over %s of the same traffic (the %s continued; %s)",
		traces.SecondsText(durationS), traces.SecondsText(verifyS), traces.SecondsText(durationS), plural(checked, "simulation", "simulations"))
	if failed == 0 {
		return over + ": every one held"
	}
	return fmt.Sprintf("%s: %s did not (SLO FAIL, with the check's figure after the row's own)", over, plural(failed, "row", "rows"))
}

// checkFailedText says how a row's check over a longer run failed: "over
// 15m: P99 TTFT over its limit within 11m".
func checkFailedText(v *search.Verification) string {
	return fmt.Sprintf("over %s: %s", traces.SecondsText(v.DurationS), verifiedText(v))
}
