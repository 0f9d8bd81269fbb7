package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"splitplan/evaluator/perf"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"splitplan/costpower"
	"splitplan/search"
	"splitplan/slo"
	"splitplan/traces"
)

// merit is the figure a design is compared on: cost, power, capacity, or
// capacity per dollar; higherBetter says which way is better.
func merit(res *search.Result, d search.DesignResult) (v float64, higherBetter bool) {
	return res.Goal.Merit(d)
}

func goalLine(res *search.Result, p *search.Problem) string {
	sizes := p.Workload.Sizes.Name() + " workload sizes"
	if arr := p.Workload.Arrivals; arr.Profile != nil || arr.BurstCV != 0 && arr.BurstCV != 1 {
		// The arrivals' shape, described at the mean rate of the goal (or
		// of the profile itself for a budget goal).
		rate := res.RateRPS
		if !(rate > 0) && arr.Profile != nil {
			rate = arr.Profile.Mean()
		}
		sizes += " at " + arr.Describe(rate)
	}
	wl := fmt.Sprintf("%s, %s, %gs per simulation, seed %d", p.Model, sizes, p.Workload.DurationS, p.Workload.Seed)
	if p.Seeds > 1 {
		wl = fmt.Sprintf("%s, %s, %gs per simulation, every one of seeds %d–%d", p.Model, sizes,
			p.Workload.DurationS, p.Workload.Seed, p.Workload.Seed+uint64(p.Seeds)-1)
	}
	return res.Goal.Headline(res, wl)
}

// PrintOptima prints a search's table: one row per design with its optimum,
// the nine SLO figures of every optimum, the best design and the search
// effort.
func PrintOptima(w io.Writer, res *search.Result, p *search.Problem, elapsed time.Duration) {
	fmt.Fprintf(w, "goal      %s\n", goalLine(res, p))
	for _, n := range p.Notes {
		fmt.Fprintf(w, "note      %s\n", n)
	}
	var baselines []int
	for i, d := range res.Designs {
		if d.Baseline && d.Found {
			baselines = append(baselines, i)
		}
	}
	if len(baselines) > 2 && p.PruneDesigns {
		// Many baselines (a GPU-pair space): compare with the best only.
		b := baselines[0]
		for _, i := range baselines[1:] {
			if beatsIn(res, res.Designs[i], res.Designs[b]) {
				b = i
			}
		}
		baselines = []int{b}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "\nDESIGN\tPROMPT\tTOKEN\t$/h\tkW\tkWh/day\tJ/TOKEN\tOWN $/h\tREQ/S\tBINDING SLO\tSLACK"
	for _, b := range baselines {
		head += "\tvs " + strings.TrimPrefix(res.Designs[b].Design, "Baseline-")
	}
	fmt.Fprintln(tw, head+"\t")
	for _, d := range res.Designs {
		if d.BoundPruned {
			fmt.Fprintf(tw, "%s\t—\t—\t—\t—\t—\t—\t—\t—\tbounded out: %s\t", d.Design, boundText(res, d.Bound))
			for range baselines {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprintln(tw, "\t")
			continue
		}
		if !d.Found {
			fmt.Fprintf(tw, "%s\t—\t—\t—\t—\t—\t—\t—\t—\tnone within the bounds\t", d.Design)
			for range baselines {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprintln(tw, "\t")
			continue
		}
		b := d.Best
		tok := fmt.Sprint(b.Token)
		if d.Baseline {
			tok = "—"
		}
		name, slack := "drain only", ""
		if b.Verdict != nil {
			f := b.Verdict.BindingFigure()
			name = fmt.Sprintf("%s %s", f.Name(), FigureText(f))
			slack = fmt.Sprintf("%.1f%%", f.Slack*100)
		}
		kwh, jpt := "—", "—"
		if b.EnergyKnown {
			kwh, jpt = fmt.Sprintf("%.0f", b.KWhPerDay()), fmt.Sprintf("%.3g", b.JPerOutputToken)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.1f\t%.1f\t%s\t%s\t%.1f\t%.4g\t%s\t%s", d.Design, b.Prompt, tok, b.CostUSDPerH, b.PowerKW, kwh, jpt, b.OwnershipUSDPerH, d.CapacityRPS, name, slack)
		m, _ := merit(res, d)
		for _, bi := range baselines {
			bm, _ := merit(res, res.Designs[bi])
			fmt.Fprintf(tw, "\t%.2f×", m/bm)
		}
		fmt.Fprintln(tw, "\t")
	}
	tw.Flush()
	printBounds(w, res, p)
	// The nine figures of every optimum.
	if len(p.SLO.Targets) > 0 && res.Goal.ChecksLatency() && res.Winner >= 0 {
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		head := "\nSLO figures (measured / limit)"
		for _, t := range p.SLO.Targets {
			head += "\t" + t.Name()
		}
		fmt.Fprintln(tw, head+"\t")
		shown := figureDesigns(res)
		for i, d := range res.Designs {
			if !d.Found || d.Best.Verdict == nil || !shown[i] {
				continue
			}
			fmt.Fprint(tw, d.Design)
			for _, f := range d.Best.Verdict.Figures {
				fmt.Fprintf(tw, "\t%s", FigureText(f))
			}
			fmt.Fprintln(tw, "\t")
		}
		tw.Flush()
		if n := countFound(res); n > len(shown) {
			fmt.Fprintf(w, "(the %d best of the %d designs that met the goal; --out has them all)\n", len(shown), n)
		}
	}
	if recs, rows, cols, ok := PairsOf(res, p.Catalog); ok && p.PruneDesigns {
		PrintPairs(w, res, recs, rows, cols)
	}
	fmt.Fprintln(w)
	if res.Winner >= 0 {
		win := res.Designs[res.Winner]
		fmt.Fprintf(w, "best      %s: %s\n", win.Design, describe(res, win))
	} else if buys := budgetBuysNothing(res, p); buys != "" {
		fmt.Fprintf(w, "best      no design: %s\n", buys)
	} else {
		fmt.Fprintln(w, "best      no design meets the SLOs within the bounds (raise --max-machines or the budget, or relax the SLOs)")
		var closest *search.Point
		for _, d := range res.Designs {
			if c := d.Closest; c != nil && c.Verdict != nil && (closest == nil || closerThan(c, closest)) {
				closest = c
			}
		}
		if closest == nil && (res.PowerBudgetKW > 0 || res.CostBudgetUSDPerH > 0) {
			empty := true
			for _, d := range res.Designs {
				empty = empty && d.GridPoints == 0
			}
			if empty {
				fmt.Fprintln(w, "closest   the budget does not buy one cluster of any design (a Splitwise design needs a prompt and a token machine)")
			}
		}
		if closest != nil {
			f := closest.Verdict.BindingFigure()
			if v := closest.Verified; v != nil && !v.Pass {
				fmt.Fprintf(w, "closest   %s: met every SLO over the search's %s, not over %s (%s)\n", closest.Label(),
					traces.SecondsText(p.Workload.DurationS), traces.SecondsText(v.DurationS), verifiedText(v))
			} else if !closest.Verdict.Drained {
				fmt.Fprintf(w, "closest   %s: %s\n", closest.Label(), closest.Verdict.DrainNote)
			} else {
				fmt.Fprintf(w, "closest   %s: %s at %s, %.1f%% over its limit\n", closest.Label(), f.Name(), FigureText(f), -f.Slack*100)
			}
		}
	}
	printProvenance(w, res, p)
	if m, err := p.Catalog.Model(p.Model); err == nil {
		var mcs []costpower.Machine
		for _, d := range res.Designs {
			for _, n := range []string{d.PromptType, d.TokenType} {
				if mc, err := p.Catalog.Machine(n); err == nil {
					mcs = append(mcs, mc)
				}
			}
		}
		mem := MemoryText(m, mcs...)
		if p.Options.Compat {
			mem = ReferenceMemoryText(m)
		}
		fmt.Fprintf(w, "memory    %s\n", mem)
	}
	sims, pts, grid, stopped := 0, 0, 0, 0
	for _, d := range res.Designs {
		sims += d.Simulations
		pts += d.Evaluated
		grid += d.GridPoints
		stopped += d.Stopped
	}
	mode := ""
	if p.Exhaustive {
		mode = ", exhaustive"
	}
	fmt.Fprintf(w, "search    %d simulations of %d points out of %d in the design spaces (%.1f%%), %s on %s%s\n",
		sims, pts, grid, 100*float64(pts)/math.Max(1, float64(grid)), elapsed.Round(time.Millisecond), plural(p.Parallel, "worker", "workers"), mode)
	if stopped > 0 {
		fmt.Fprintf(w, "search    %d of them stopped once they certainly failed a latency target (the same verdicts; --points runs every one to its end)\n", stopped)
	}
	if p.PruneDesigns && !p.Exhaustive {
		fmt.Fprintf(w, "search    %d of %d designs searched; %d bounded out before simulating (their analytic bound cannot beat the best)\n",
			len(res.Designs)-res.DesignsPruned, len(res.Designs), res.DesignsPruned)
	}
	printVerified(w, res, p)
}

// printVerified says what the check over a longer run did: one line,
// and one more per design whose optimum moved because of it (its
// optimum now, the first point that failed and how many more did).
func printVerified(w io.Writer, res *search.Result, p *search.Problem) {
	if !(res.VerifyS > 0) {
		return
	}
	sims, moved, checked := 0, 0, 0
	for _, d := range res.Designs {
		sims += d.Verifications
		if len(d.Unverified) > 0 {
			moved++
		}
		if d.Found && d.Best.Verified != nil {
			checked++
		}
	}
	if checked == 0 && moved == 0 {
		return // (no optimum to check)
	}
	over := fmt.Sprintf("%s of the same traffic (the search's %s continued; %s)", traces.SecondsText(res.VerifyS),
		traces.SecondsText(p.Workload.DurationS), plural(sims, "simulation", "simulations"))
	what := "every optimum"
	if res.VerifyWinnerOnly {
		what = "the best design's optimum"
	}
	if moved == 0 {
		fmt.Fprintf(w, "verify    %s also met every SLO over %s\n", what, over)
		return
	}
	fmt.Fprintf(w, "verify    %s was checked over %s; where one failed there, the search went on past it:\n", what, over)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, d := range res.Designs {
		if len(d.Unverified) == 0 {
			continue
		}
		now := "none within the bounds holds"
		if d.Found {
			now = pointText(res, d.Best, d.Baseline)
			if v := d.Best.Verified; v != nil {
				now += " (" + verifiedText(v) + ")"
			}
		}
		first := d.Unverified[0]
		failed := fmt.Sprintf("%s failed (%s)", pointText(res, first, d.Baseline), verifiedText(first.Verified))
		if n := len(d.Unverified) - 1; n > 0 {
			failed += fmt.Sprintf(" and %d more", n)
		}
		fmt.Fprintf(tw, "verify      %s\t%s\t%s\n", d.Design, now, failed)
	}
	tw.Flush()
}

// pointText is a point's machine counts, "23P/8T" or "×58", with its rate
// for a goal that searches the rate ("×40 at 71.65 req/s").
func pointText(res *search.Result, pt search.Point, baseline bool) string {
	c := countsText(false, pt.Prompt, pt.Token)
	if baseline {
		c = fmt.Sprintf("×%d", pt.Prompt)
	}
	if !res.Goal.NeedsRate() {
		c += fmt.Sprintf(" at %.4g req/s", pt.RateRPS)
	}
	return c
}

// verifiedText is a verification's binding figure ("P90 TBT 2.61/1.5×"),
// or why it failed when no SLO figure says it.
func verifiedText(v *search.Verification) string {
	if v.Verdict != nil && v.Verdict.Drained && len(v.Verdict.Figures) > 0 {
		f := v.Verdict.BindingFigure()
		return fmt.Sprintf("%s %s", f.Name(), FigureText(f))
	}
	if v.StopLimit != "" {
		// (By the minute, but never past the check's length: a run
		// that drains past it stopped at its end.)
		return fmt.Sprintf("%s over its limit within %s", v.StopLimit, traces.SecondsText(math.Min(math.Ceil(v.StopS/60)*60, v.DurationS)))
	}
	if v.Note != "" {
		return v.Note
	}
	if v.Verdict != nil && v.Verdict.DrainNote != "" {
		return v.Verdict.DrainNote
	}
	if v.Pass {
		return "drained"
	}
	return "did not drain"
}

func closerThan(a, b *search.Point) bool {
	sa, sb := a.Verdict.BindingFigure().Slack, b.Verdict.BindingFigure().Slack
	if !a.Verdict.Drained {
		sa -= 1e6
	}
	if !b.Verdict.Drained {
		sb -= 1e6
	}
	return sa > sb
}

// FigureText is an SLO figure as measured/limit, in seconds for an
// absolute limit and as a slowdown factor otherwise.
func FigureText(f slo.Figure) string {
	if f.Metric == slo.GoodputMiss {
		// The share of requests meeting every limit, against the share
		// required.
		return fmt.Sprintf("%.1f%%/≥%g%%", 100*(1-f.Measured), f.Percentile)
	}
	if f.AbsoluteS > 0 {
		return fmt.Sprintf("%.3gs/%.3gs", f.Measured, f.Limit)
	}
	return fmt.Sprintf("%s/%g×", closeDecimals(f.Measured, f.Limit), f.Limit)
}

// closeDecimals writes a figure measured against limit with two decimals,
// or as many more (up to six) as it takes not to read as the limit
// itself: 6.002/6× fails, where 6.00/6× would seem to pass.
func closeDecimals(measured, limit float64) string {
	for d := 2; ; d++ {
		m := strconv.FormatFloat(measured, 'f', d, 64)
		if d == 6 || measured == limit || m != strconv.FormatFloat(limit, 'f', d, 64) {
			return m
		}
	}
}

func describe(res *search.Result, d search.DesignResult) string {
	b := d.Best
	counts := fmt.Sprintf("%d prompt + %d token machines", b.Prompt, b.Token)
	if d.Baseline {
		counts = plural(b.Prompt, "machine", "machines")
	}
	return res.Goal.Describe(d, counts) + specOnlyNote(d)
}

// specOnlyNote says, after a best line, that the design's performance
// rests on spec-only figures (uncalibrated) for one pool or both; "" when
// both are profiled or calibrated.
func specOnlyNote(d search.DesignResult) string {
	p, t := d.PromptProvenance.Kind == perf.SpecOnly, d.TokenProvenance.Kind == perf.SpecOnly
	switch {
	case p && (t || d.Baseline):
		return " (spec-only performance figures: uncalibrated)"
	case p:
		return " (prompt pool on spec-only performance figures: uncalibrated)"
	case t:
		return " (token pool on spec-only performance figures: uncalibrated)"
	}
	return ""
}

// jsonFigure, jsonDesign and jsonResult are the --format json layout.
type jsonFigure struct {
	SLO      string  `json:"slo"`
	Measured float64 `json:"measured"`
	Limit    float64 `json:"limit"`
	Absolute bool    `json:"absolute"`
	Slack    float64 `json:"slack"`
}

type jsonDesign struct {
	Design string `json:"design"`
	Found  bool   `json:"found"`
	// The point's counts and figures: the optimum's, or the closest
	// failing point's; absent when there is neither (nothing simulated
	// within the budget or the bounds).
	PromptMachines *int         `json:"prompt_machines,omitempty"`
	TokenMachines  *int         `json:"token_machines,omitempty"`
	CostUSDPerH    *float64     `json:"cost_usd_per_h,omitempty"`
	PowerKW        *float64     `json:"power_kw,omitempty"`
	RPS            *float64     `json:"rps,omitempty"`
	CapacityRPS    float64      `json:"capacity_rps,omitempty"`
	BindingSLO     string       `json:"binding_slo,omitempty"`
	BindingSlack   float64      `json:"binding_slack,omitempty"`
	Figures        []jsonFigure `json:"slo_figures,omitempty"`
	Simulations    int          `json:"simulations"`
	// Stopped counts the simulations stopped once they certainly failed
	// (absent when none was).
	Stopped       int      `json:"stopped_simulations,omitempty"`
	Evaluated     int      `json:"evaluated_points"`
	GridPoints    int      `json:"grid_points"`
	Provenance    string   `json:"perf_provenance"`
	BoundedBy     string   `json:"bounded_by,omitempty"`
	AnalyticBound *float64 `json:"analytic_bound,omitempty"`
	// The energy figures (absent when the simulation had no power model).
	KWhPerDay        *float64 `json:"kwh_per_day,omitempty"`
	JPerOutputToken  *float64 `json:"j_per_output_token,omitempty"`
	OwnershipUSDPerH *float64 `json:"ownership_usd_per_h,omitempty"`
	// Verified is the optimum's check over the longer run (absent when
	// none ran); Unverified the points that were the design's optimum
	// before failing it.
	Verified   *jsonVerification `json:"verified,omitempty"`
	Unverified []jsonUnverified  `json:"unverified,omitempty"`
}

// jsonVerification is a search.Verification: the binding figure of a run
// that ended, or the limit a stopped run certainly failed and when.
type jsonVerification struct {
	DurationS  float64 `json:"duration_s"`
	Pass       bool    `json:"pass"`
	BindingSLO string  `json:"binding_slo,omitempty"`
	Measured   float64 `json:"measured,omitempty"`
	Limit      float64 `json:"limit,omitempty"`
	Slack      float64 `json:"slack,omitempty"`
	StoppedBy  string  `json:"stopped_by,omitempty"`
	StoppedAtS float64 `json:"stopped_at_s,omitempty"`
	Note       string  `json:"note,omitempty"`
}

// jsonUnverified is a point that met every SLO on the search's trace and
// failed the verification.
type jsonUnverified struct {
	PromptMachines int              `json:"prompt_machines"`
	TokenMachines  int              `json:"token_machines"`
	RPS            float64          `json:"rps"`
	Verified       jsonVerification `json:"verified"`
}

func verificationJSON(v *search.Verification) jsonVerification {
	j := jsonVerification{DurationS: v.DurationS, Pass: v.Pass, StoppedBy: v.StopLimit, StoppedAtS: v.StopS, Note: v.Note}
	if v.Verdict != nil {
		f := v.Verdict.BindingFigure()
		j.BindingSLO, j.Measured, j.Limit, j.Slack = f.Key(), f.Measured, f.Limit, f.Slack
		if !v.Verdict.Drained {
			j.BindingSLO = "drain"
		}
	}
	return j
}

type jsonResult struct {
	Goal              string       `json:"goal"`
	RPS               float64      `json:"rps,omitempty"`
	PowerBudgetKW     float64      `json:"power_budget_kw,omitempty"`
	CostBudgetUSDPerH float64      `json:"cost_budget_usd_per_h,omitempty"`
	Model             string       `json:"model"`
	Workload          string       `json:"workload"`
	DurationS         float64      `json:"duration_s"`
	Seed              uint64       `json:"seed"`
	Seeds             int          `json:"seeds"`
	VerifyS           float64      `json:"verify_s,omitempty"`
	Best              string       `json:"best,omitempty"`
	Designs           []jsonDesign `json:"designs"`
}

// WriteOptimaJSON writes a search's optima as indented JSON.
func WriteOptimaJSON(w io.Writer, res *search.Result, p *search.Problem) error {
	return writeJSON(w, optimaJSON(res, p))
}

// writeJSON writes v to w as JSON indented by two spaces, the form of
// every JSON document splitplan writes.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// optimaJSON is a search's optima as WriteOptimaJSON writes them.
func optimaJSON(res *search.Result, p *search.Problem) jsonResult {
	out := jsonResult{Goal: fmt.Sprint(res.Goal), RPS: res.RateRPS, PowerBudgetKW: res.PowerBudgetKW, CostBudgetUSDPerH: res.CostBudgetUSDPerH,
		Model: p.Model, Workload: p.Workload.Sizes.Name(), DurationS: p.Workload.DurationS, Seed: p.Workload.Seed, Seeds: p.Seeds,
		VerifyS: res.VerifyS}
	if res.Winner >= 0 {
		out.Best = res.Designs[res.Winner].Design
	}
	for _, d := range res.Designs {
		jd := jsonDesign{Design: d.Design, Found: d.Found, Simulations: d.Simulations, Stopped: d.Stopped, Evaluated: d.Evaluated, GridPoints: d.GridPoints, Provenance: d.Provenance,
			BoundedBy: d.BoundedBy}
		if d.BoundPruned {
			b := d.Bound
			jd.BoundedBy, jd.AnalyticBound = "analytic-bound", &b
		}
		b := d.Best
		if !d.Found && d.Closest != nil {
			b = *d.Closest
		}
		if d.Found || d.Closest != nil {
			jd.PromptMachines, jd.TokenMachines, jd.CostUSDPerH, jd.PowerKW, jd.RPS = &b.Prompt, &b.Token, &b.CostUSDPerH, &b.PowerKW, &b.RateRPS
		}
		if d.Found {
			jd.CapacityRPS = d.CapacityRPS
		}
		if (d.Found || d.Closest != nil) && b.EnergyKnown {
			k, j, o := b.KWhPerDay(), b.JPerOutputToken, b.OwnershipUSDPerH
			jd.KWhPerDay, jd.JPerOutputToken, jd.OwnershipUSDPerH = &k, &j, &o
		}
		if b.Verdict != nil {
			f := b.Verdict.BindingFigure()
			jd.BindingSLO, jd.BindingSlack = f.Key(), f.Slack
			if !b.Verdict.Drained {
				jd.BindingSLO = "drain"
			}
			for _, f := range b.Verdict.Figures {
				jd.Figures = append(jd.Figures, jsonFigure{SLO: f.Key(), Measured: f.Measured, Limit: f.Limit, Absolute: f.AbsoluteS > 0, Slack: f.Slack})
			}
		}
		if d.Found && d.Best.Verified != nil {
			v := verificationJSON(d.Best.Verified)
			jd.Verified = &v
		}
		for _, u := range d.Unverified {
			jd.Unverified = append(jd.Unverified, jsonUnverified{PromptMachines: u.Prompt, TokenMachines: u.Token, RPS: u.RateRPS, Verified: verificationJSON(u.Verified)})
		}
		out.Designs = append(out.Designs, jd)
	}
	return out
}

// printProvenance says where each design's iteration times come from: one
// line per distinct provenance, naming the designs (and pools) using it or,
// in a GPU-pair space (p.PruneDesigns), the machine types.
func printProvenance(w io.Writer, res *search.Result, p *search.Problem) {
	var order []string
	users := map[string][]string{}
	seen := map[string]bool{}
	add := func(pv, who string) {
		if seen[pv+"|"+who] {
			return
		}
		seen[pv+"|"+who] = true
		if _, ok := users[pv]; !ok {
			order = append(order, pv)
		}
		users[pv] = append(users[pv], who)
	}
	label := func(machine string) string {
		if m, err := p.Catalog.Machine(machine); err == nil {
			return m.Label()
		}
		return machine
	}
	for _, d := range res.Designs {
		if d.Provenance == "" {
			continue
		}
		pv, tv := d.PromptProvenance.String(), d.TokenProvenance.String()
		switch {
		case p.PruneDesigns:
			add(pv, label(d.PromptType))
			add(tv, label(d.TokenType))
		case pv == tv:
			add(pv, d.Design)
		default:
			add(pv, d.Design+" prompt")
			add(tv, d.Design+" token")
		}
	}
	for _, pv := range order {
		fmt.Fprintf(w, "perf      %s: %s\n", pv, strings.Join(users[pv], ", "))
	}
	if p.PhysicsOnly() {
		fmt.Fprintln(w, "perf      one model for the whole comparison: the space includes machine types without a profile, so every machine (and the SLO reference) uses the analytic model; the 2023 SplitwiseSim profiles serve --compat splitwise-sim and the paper's designs")
	}
}

// boundText says what a design's analytic bound is.
func boundText(res *search.Result, b float64) string {
	if math.IsInf(b, 1) {
		return "no cluster within the bounds can reach the rate"
	}
	if res.Goal.NeedsRate() {
		return "at least " + meritText(res, b)
	}
	return "at most " + meritText(res, b)
}

func countFound(res *search.Result) int {
	n := 0
	for _, d := range res.Designs {
		if d.Found {
			n++
		}
	}
	return n
}

// maxFigureRows bounds the SLO-figures table of a large search.
const maxFigureRows = 12

// figureDesigns picks the designs whose SLO figures are printed: all, or
// in a large search the maxFigureRows best.
func figureDesigns(res *search.Result) map[int]bool {
	var found []int
	for i, d := range res.Designs {
		if d.Found {
			found = append(found, i)
		}
	}
	sort.SliceStable(found, func(a, b int) bool { return beatsIn(res, res.Designs[found[a]], res.Designs[found[b]]) })
	if len(found) > maxFigureRows {
		found = found[:maxFigureRows]
	}
	out := map[int]bool{}
	for _, i := range found {
		out[i] = true
	}
	return out
}

// printBounds says which designs' answers the machine bound may have
// changed (BoundedBy), and which bounds a budget raised.
func printBounds(w io.Writer, res *search.Result, p *search.Problem) {
	var grown []string
	for _, d := range res.Designs {
		if d.MaxMachines > p.MaxMachines {
			grown = append(grown, fmt.Sprintf("%s %d", d.Design, d.MaxMachines))
		}
	}
	if len(grown) > 0 {
		fmt.Fprintf(w, "note      machines per pool searched up to what the budget buys (beyond --max-machines %d): %s\n", p.MaxMachines, strings.Join(grown, ", "))
	}
	if p.PruneDesigns {
		// A GPU-pair space: one line for the designs that found nothing,
		// one for those whose optimum sits at the bound.
		var none, at, idle []string
		for _, d := range res.Designs {
			switch {
			case d.FailsIdle != "":
				idle = append(idle, fmt.Sprintf("%s (%s)", d.Design, d.FailsIdle))
			case d.BoundedBy != "" && !d.Found:
				none = append(none, d.Design)
			case d.BoundedBy != "":
				at = append(at, d.Design)
			}
		}
		if len(none) > 0 {
			fmt.Fprintf(w, "warning   %s the SLOs with no cluster of up to %d machines per pool (--max-machines; a larger bound may change that): %s\n",
				plural(len(none), "design meets", "designs meet"), p.MaxMachines, strings.Join(none, ", "))
		}
		if len(idle) > 0 {
			fmt.Fprintf(w, "warning   %s an SLO even with idle machines (at a tenth of the load): no bound on the machines helps: %s\n",
				plural(len(idle), "design fails", "designs fail"), strings.Join(idle, ", "))
		}
		if len(at) > 0 {
			fmt.Fprintf(w, "warning   %s their optimum with a pool at the bound of %d machines (--max-machines; a larger bound may change their answer): %s\n",
				plural(len(at), "design has", "designs have"), p.MaxMachines, strings.Join(at, ", "))
		}
		return
	}
	for _, d := range res.Designs {
		if d.FailsIdle != "" {
			fmt.Fprintf(w, "warning   %s: fails %s even with idle machines (at a tenth of the load): no bound on the machines helps\n", d.Design, d.FailsIdle)
		}
		if d.BoundedBy == "" {
			continue
		}
		what := "its optimum"
		if !d.Found {
			what = "its closest point"
		}
		fmt.Fprintf(w, "warning   %s: %s has a pool at the bound of %d machines (--max-machines): a larger bound may change the answer\n", d.Design, what, d.MaxMachines)
	}
}

// plural is n with the singular or plural phrase: "1 machine", "2 machines".
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// budgetBuysNothing says, when a budget buys not even one machine of any
// design searched, what the budget is and what the least machine takes,
// e.g. "1 kW buys no machine (the least, DGX-A100, is provisioned at
// 6.5 kW)"; "" otherwise.
func budgetBuysNothing(res *search.Result, p *search.Problem) string {
	if !(res.PowerBudgetKW > 0 || res.CostBudgetUSDPerH > 0) || res.PowerBudgetDrawn || p.Catalog == nil {
		return ""
	}
	least, leastName := math.Inf(1), ""
	for _, d := range res.Designs {
		if d.GridPoints > 0 {
			return ""
		}
		for _, n := range []string{d.PromptType, d.TokenType} {
			m, err := p.Catalog.Machine(n)
			if err != nil {
				return ""
			}
			v := m.CostUSDPerH
			if res.PowerBudgetKW > 0 {
				v = m.PowerKW
			}
			if v < least {
				least, leastName = v, m.Name
			}
		}
	}
	if leastName == "" {
		return ""
	}
	if res.PowerBudgetKW > 0 {
		if least <= res.PowerBudgetKW {
			return ""
		}
		return fmt.Sprintf("%g kW buys no machine (the least, %s, is provisioned at %.3g kW)", res.PowerBudgetKW, leastName, least)
	}
	if least <= res.CostBudgetUSDPerH {
		return ""
	}
	return fmt.Sprintf("$%g/h buys no machine (the least, %s, costs $%.3g/h)", res.CostBudgetUSDPerH, leastName, least)
}
