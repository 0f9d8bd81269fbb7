package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"splitplan/plots"
	"splitplan/search"
	"splitplan/traces"
)

// PrintSchedules prints the plans of every design over a rate profile:
// per design its static, scheduled, ideal (and reactive) plans with their
// machine-hours, rental, energy and SLO attainment, then the best
// scheduled plan's saving against its static plan.
func PrintSchedules(w io.Writer, p *search.Problem, spec search.ScheduleSpec, ds []search.DesignSchedule) error {
	prof := p.Workload.Arrivals.Profile
	fmt.Fprintf(w, "goal      %s over %s, %gs simulated end to end, seed %d\n", p.Goal, p.Workload.Arrivals.Describe(p.RateRPS), p.Workload.DurationS, p.Workload.Seed)
	steady := spec.SteadyS
	if steady == 0 {
		steady = min(spec.IntervalS, 120) // (search.Schedule's default)
	}
	verified := ""
	if p.VerifyS > steady {
		verified = fmt.Sprintf(" (its optimum checked over %s of that rate, --verify)", traces.SecondsText(p.VerifyS))
	}
	fmt.Fprintf(w, "schedule  intervals of %s, each sized by a steady-state search at its peak rate%s; machines start %s before they serve (--scale-delay) and stop once drained\n",
		traces.SecondsText(spec.IntervalS), verified, traces.SecondsText(spec.DelayS))
	if prof == nil {
		return fmt.Errorf("report: schedules without a rate profile")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nDESIGN\tPLAN\tMACHINES (PROMPT/TOKEN)\tMACHINE-H\t$\tkWh\tSLOS\tINTERVALS MET\tvs STATIC\t")
	for _, d := range ds {
		st := d.Plan(search.PlanStatic)
		for i, pl := range d.Plans {
			name := ""
			if i == 0 {
				name = d.Design
			}
			slos := "met (" + pl.Binding + ")"
			if !pl.Pass {
				slos = "MISSED (" + pl.Binding + ")"
			}
			vs := "—"
			if st != nil && st.CostUSD > 0 && pl.Kind != search.PlanStatic {
				vs = fmt.Sprintf("%+.1f%%", 100*(pl.CostUSD/st.CostUSD-1))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%.1f\t%.1f\t%s\t%.0f%%\t%s\t\n", name, pl.Kind, machinesRange(pl), pl.MachineHours, pl.CostUSD, pl.EnergyKWh, slos, 100*pl.IntervalsMet, vs)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	best, bi := -1.0, -1
	for i, d := range ds {
		if sc := d.Plan(search.PlanScheduled); sc != nil && sc.Pass && (bi < 0 || sc.CostUSD < best) {
			best, bi = sc.CostUSD, i
		}
	}
	if bi < 0 {
		_, err := fmt.Fprintln(w, "\nbest      no scheduled plan meets every SLO over the profile")
		return err
	}
	d := ds[bi]
	sc, st, id := d.Plan(search.PlanScheduled), d.Plan(search.PlanStatic), d.Plan(search.PlanIdeal)
	_, err := fmt.Fprintf(w, "\nbest      %s scheduled: $%.1f over the profile against $%.1f static (%.1f%% saved; the ideal, instantaneous scaling: $%.1f, %.1f%%)\n",
		d.Design, sc.CostUSD, st.CostUSD, 100*(1-sc.CostUSD/st.CostUSD), id.CostUSD, 100*(1-id.CostUSD/st.CostUSD))
	return err
}

// machinesRange is a plan's machines: one count, or the least and most
// over its intervals ("15–22/7–9"); "autoscaled" for a reactive plan.
func machinesRange(pl search.PlanFigures) string {
	if pl.Kind == search.PlanReactive {
		return "autoscaled"
	}
	lo, hi := [2]int{1 << 30, 1 << 30}, [2]int{}
	for _, iv := range pl.Intervals {
		lo = [2]int{min(lo[0], iv.Prompt), min(lo[1], iv.Token)}
		hi = [2]int{max(hi[0], iv.Prompt), max(hi[1], iv.Token)}
	}
	one := func(i int) string {
		if lo[i] == hi[i] {
			return strconv.Itoa(lo[i])
		}
		return fmt.Sprintf("%d–%d", lo[i], hi[i])
	}
	if hi[1] == 0 {
		return one(0)
	}
	return one(0) + "/" + one(1)
}

// ScheduleCSVHeader lists the columns of WriteScheduleCSV.
const ScheduleCSVHeader = "design,plan,start_s,end_s,mean_rps,peak_rps,prompt_machines,token_machines,requests,interval_slos_met," +
	"plan_machine_hours,plan_cost_usd,plan_energy_kwh,plan_slos_met,plan_binding"

// WriteScheduleCSV writes one row per design, plan and interval (a
// reactive plan's machines are empty: the autoscaler chose them), with the
// plan's totals repeated on each of its rows.
func WriteScheduleCSV(w io.Writer, ds []search.DesignSchedule) error {
	var b strings.Builder
	b.WriteString(ScheduleCSVHeader + "\n")
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, d := range ds {
		for _, pl := range d.Plans {
			for _, iv := range pl.Intervals {
				pm, tm := strconv.Itoa(iv.Prompt), strconv.Itoa(iv.Token)
				if iv.Prompt < 0 {
					pm, tm = "", ""
				}
				fields := []string{csvQuote(d.Design), pl.Kind, g(iv.StartS), g(iv.EndS), g(iv.MeanRPS), g(iv.PeakRPS), pm, tm,
					strconv.Itoa(iv.Requests), strconv.FormatBool(iv.Pass), g(pl.MachineHours), g(pl.CostUSD), g(pl.EnergyKWh),
					strconv.FormatBool(pl.Pass), csvQuote(pl.Binding)}
				b.WriteString(strings.Join(fields, ",") + "\n")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// csvQuote quotes s for a CSV field when it needs it.
func csvQuote(s string) string {
	if strings.ContainsAny(s, ",\"\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// ReadScheduleCSV reads a file written by WriteScheduleCSV back into the
// designs' plans; errors name the file, line and column.
func ReadScheduleCSV(path string) ([]search.DesignSchedule, error) {
	t, err := readCSVTable(path, ScheduleCSVHeader, "a schedule CSV (optimize --schedule-out)")
	if err != nil {
		return nil, err
	}
	var out []search.DesignSchedule
	for i := range t.rows {
		c := t.row(i)
		design, kind := c.str("design"), c.str("plan")
		if !validPlanKind(kind) {
			c.fail("plan", "a plan: static, scheduled, ideal or reactive")
		}
		if design == "" {
			c.fail("design", "a design name")
		}
		iv := search.IntervalFigures{StartS: c.num("start_s", false), EndS: c.num("end_s", false), MeanRPS: c.num("mean_rps", false),
			PeakRPS: c.num("peak_rps", false), Prompt: -1, Token: -1, Requests: c.integer("requests"), Pass: c.boolean("interval_slos_met")}
		if c.str("prompt_machines") != "" || c.str("token_machines") != "" {
			iv.Prompt, iv.Token = c.integer("prompt_machines"), c.integer("token_machines")
		}
		pl := search.PlanFigures{Kind: kind, MachineHours: c.num("plan_machine_hours", false), CostUSD: c.num("plan_cost_usd", false),
			EnergyKWh: c.num("plan_energy_kwh", false), Pass: c.boolean("plan_slos_met"), Binding: c.str("plan_binding")}
		if c.err != nil {
			return nil, c.err
		}
		if len(out) == 0 || out[len(out)-1].Design != design {
			out = append(out, search.DesignSchedule{Design: design})
		}
		d := &out[len(out)-1]
		if len(d.Plans) == 0 || d.Plans[len(d.Plans)-1].Kind != kind {
			d.Plans = append(d.Plans, pl)
		}
		last := &d.Plans[len(d.Plans)-1]
		last.Intervals = append(last.Intervals, iv)
	}
	for i := range out {
		for j := range out[i].Plans {
			pl := &out[i].Plans[j]
			met := 0
			for _, iv := range pl.Intervals {
				if iv.Pass {
					met++
				}
			}
			pl.IntervalsMet = float64(met) / float64(len(pl.Intervals))
		}
	}
	return out, nil
}

// WriteScheduleJSON writes the plans as JSON: the profile and the
// schedule's settings, then per design its plans with their intervals.
func WriteScheduleJSON(w io.Writer, p *search.Problem, spec search.ScheduleSpec, ds []search.DesignSchedule) error {
	doc := ScheduleDoc{p.Goal.String(), p.Workload.Arrivals.Describe(p.RateRPS), p.RateRPS, spec.IntervalS, spec.DelayS, ds}
	return writeJSON(w, doc)
}

// ScheduleDoc is the JSON document of optimize --schedule --format json:
// the goal, the profile and the schedule's settings, then per design its
// plans with their intervals.
type ScheduleDoc struct {
	Goal      string                  `json:"goal"`
	Profile   string                  `json:"profile"`
	MeanRPS   float64                 `json:"mean_rps"`
	IntervalS float64                 `json:"interval_s"`
	DelayS    float64                 `json:"scale_delay_s"`
	Designs   []search.DesignSchedule `json:"designs"`
}

// ReadScheduleJSON reads a document WriteScheduleJSON wrote (from the file
// named path, which errors name); unknown fields are errors.
func ReadScheduleJSON(path string, r io.Reader) (ScheduleDoc, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var doc ScheduleDoc
	if err := dec.Decode(&doc); err != nil {
		return ScheduleDoc{}, fmt.Errorf("%s: %v", path, err)
	}
	if dec.More() {
		return ScheduleDoc{}, fmt.Errorf("%s: more than one JSON document", path)
	}
	for _, d := range doc.Designs {
		for _, pl := range d.Plans {
			if !validPlanKind(pl.Kind) {
				return ScheduleDoc{}, fmt.Errorf("%s: %s: unknown plan %q (expected static, scheduled, ideal or reactive)", path, d.Design, pl.Kind)
			}
		}
	}
	return doc, nil
}

// validPlanKind reports whether k names a kind of plan.
func validPlanKind(k string) bool {
	switch k {
	case search.PlanStatic, search.PlanScheduled, search.PlanIdeal, search.PlanReactive:
		return true
	}
	return false
}

// DayFigureOf is the day figure of one design's plans: the profile's rate
// per interval and the machines each planned schedule runs (the reactive
// plan, whose machines the autoscaler chose, is left out).
func DayFigureOf(d search.DesignSchedule, profile string) plots.DayFigure {
	f := plots.DayFigure{Title: "A day of " + d.Design, Subtitle: profile}
	for _, pl := range d.Plans {
		if pl.Kind == search.PlanReactive || len(pl.Intervals) == 0 {
			continue
		}
		if f.StartsH == nil {
			for _, iv := range pl.Intervals {
				f.StartsH = append(f.StartsH, iv.StartS/3600)
				f.MeanRPS = append(f.MeanRPS, iv.MeanRPS)
				f.PeakRPS = append(f.PeakRPS, iv.PeakRPS)
				f.EndH = iv.EndS / 3600
			}
		}
		s := plots.DaySeries{Name: pl.Kind}
		for _, iv := range pl.Intervals {
			s.Prompt = append(s.Prompt, float64(iv.Prompt))
			s.Token = append(s.Token, float64(iv.Token))
			s.Met = append(s.Met, iv.Pass)
		}
		f.Plans = append(f.Plans, s)
	}
	return f
}

// WriteDayPlots draws each design's day figure into dir, PNG and SVG
// ("day-DESIGN.png"), and returns the paths written.
func WriteDayPlots(dir string, p *search.Problem, ds []search.DesignSchedule) ([]string, error) {
	fd, err := newFigureDir(dir)
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		f := DayFigureOf(d, p.Workload.Arrivals.Describe(p.RateRPS))
		if err := fd.each("day-"+fileName(d.Design), func(path string) error { return plots.Day(path, f) }); err != nil {
			return fd.written, err
		}
	}
	return fd.written, nil
}
