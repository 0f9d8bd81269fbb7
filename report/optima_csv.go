package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"splitplan/search"
	"splitplan/slo"
)

func ff(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// figureColumns names the SLO figure columns: METRIC_pNN_slowdown for a
// slowdown target, METRIC_pNN_s for an absolute one, goodput_pNN_miss for
// goodput (the fraction of requests that missed a per-request limit).
func figureColumns(spec slo.Spec) []string {
	cols := make([]string, len(spec.Targets))
	for i, t := range spec.Targets {
		if t.Metric == slo.GoodputMiss {
			cols[i] = t.Key() + "_miss"
		} else if t.AbsoluteS > 0 {
			cols[i] = t.Key() + "_s"
		} else {
			cols[i] = t.Key() + "_slowdown"
		}
	}
	return cols
}

// bindingOf names the binding SLO of a point and its slack; a run that did
// not drain binds on "drain".
func bindingOf(p *search.Point) (string, string) {
	switch {
	case p.Pruned:
		return "capacity_bound", ""
	case p.Verdict == nil:
		if p.Feasible {
			return "", ""
		}
		return "drain", ""
	case !p.Verdict.Drained:
		return "drain", ff(p.Verdict.BindingFigure().Slack)
	}
	b := p.Verdict.BindingFigure()
	return b.Key(), ff(b.Slack)
}

func figures(p *search.Point, n int) []string {
	out := make([]string, n)
	if p.Verdict != nil {
		for i, f := range p.Verdict.Figures {
			out[i] = ff(f.Measured)
		}
	}
	return out
}

// OptimaCSVHeader is the leading part of WriteOptimaCSV's header; the SLO
// figure columns and the search counts follow.
const OptimaCSVHeader = "design,goal,prompt_machines,token_machines,machines,cost_usd_per_h,power_kw,rps,capacity_rps,feasible,binding_slo,binding_slack"

// WriteOptimaCSV writes one row per design: its optimum (or, when none was
// found, the point that failed closest to passing, with feasible false).
// bounded_by is "max-machines" for a design whose optimum has a pool at
// the search's bound (see search.DesignResult.BoundedBy), and
// "analytic-bound" for a design left out by its analytic bound; a search
// that left designs out gets a column analytic_bound with each such
// design's bound (the goal's unit). The result of an
// interrupted search (res.Partial) gets a last column,
// partial, true on every row: the file lists only the designs the search
// finished.
func WriteOptimaCSV(w io.Writer, res *search.Result, spec slo.Spec) error {
	cw := csv.NewWriter(w)
	head := append(splitHeader(OptimaCSVHeader), figureColumns(spec)...)
	head = append(head, "simulations", "evaluated_points", "grid_points", "pruned_points", "perf_provenance", "bounded_by")
	head = append(head, energyColumns...)
	if res.DesignsPruned > 0 {
		head = append(head, "analytic_bound")
	}
	if res.VerifyS > 0 {
		head = append(head, verifyColumns...)
	}
	if res.Partial {
		head = append(head, "partial")
	}
	cw.Write(head)
	for _, d := range res.Designs {
		p := d.Best
		if !d.Found {
			p = search.Point{Design: d.Design}
			if d.Closest != nil {
				p = *d.Closest
			}
		}
		name, slack := bindingOf(&p)
		capacity := ""
		if d.Found {
			capacity = ff(d.CapacityRPS)
		}
		row := []string{d.Design, fmt.Sprint(res.Goal), strconv.Itoa(p.Prompt), strconv.Itoa(p.Token), strconv.Itoa(p.Machines()),
			ff(p.CostUSDPerH), ff(p.PowerKW), ff(p.RateRPS), capacity, strconv.FormatBool(d.Found), name, slack}
		if !d.Found && d.Closest == nil {
			// No point at all (nothing within the budget or the bounds):
			// its columns are empty, not a cluster of 0 machines.
			row = []string{d.Design, fmt.Sprint(res.Goal), "", "", "", "", "", "", "", "false", "", ""}
		}
		row = append(row, figures(&p, len(spec.Targets))...)
		bounded := d.BoundedBy
		if d.BoundPruned {
			bounded = "analytic-bound"
		}
		row = append(row, strconv.Itoa(d.Simulations), strconv.Itoa(d.Evaluated), strconv.Itoa(d.GridPoints), strconv.Itoa(d.Pruned), d.Provenance, bounded)
		row = append(row, energyFields(&p)...)
		if res.DesignsPruned > 0 {
			b := ""
			if d.BoundPruned {
				b = ff(d.Bound)
			}
			row = append(row, b)
		}
		if res.VerifyS > 0 {
			row = append(row, verifyFields(d, res.VerifyS)...)
		}
		if res.Partial {
			row = append(row, "true")
		}
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

// verifyColumns are the optima CSV's columns of the check over a longer
// run (search.Problem.VerifyS), present when one ran: its length, the
// optimum's binding SLO and slack there (the SLO a stopped run certainly
// failed, its slack empty), and how many points failed it before the
// optimum did not.
var verifyColumns = []string{"verified_s", "verified_slo", "verified_slack", "unverified_points"}

// verifyFields are d's verifyColumns; the optimum's are empty when the
// design found none or its optimum was not checked.
func verifyFields(d search.DesignResult, verifyS float64) []string {
	slo, slack := "", ""
	if v := d.Best.Verified; d.Found && v != nil {
		slo, slack = verificationBinding(v)
	}
	return []string{ff(verifyS), slo, slack, strconv.Itoa(len(d.Unverified))}
}

// PointsCSVHeader is the leading part of WritePointsCSV's header; the SLO
// figure columns and a note follow.
const PointsCSVHeader = "design,prompt_machines,token_machines,machines,rps,cost_usd_per_h,power_kw,requests,feasible,drained,binding_slo,binding_slack"

// WritePointsCSV writes every simulated point with its verdict.
func WritePointsCSV(w io.Writer, res *search.Result, spec slo.Spec) error {
	cw := csv.NewWriter(w)
	head := append(splitHeader(PointsCSVHeader), figureColumns(spec)...)
	cw.Write(append(append(head, "note"), energyColumns...))
	for i := range res.Points {
		p := &res.Points[i]
		name, slack := bindingOf(p)
		drained := p.Feasible
		if p.Verdict != nil {
			drained = p.Verdict.Drained
		}
		row := []string{p.Design, strconv.Itoa(p.Prompt), strconv.Itoa(p.Token), strconv.Itoa(p.Machines()), ff(p.RateRPS),
			ff(p.CostUSDPerH), ff(p.PowerKW), strconv.Itoa(p.Requests), strconv.FormatBool(p.Feasible),
			strconv.FormatBool(drained), name, slack}
		row = append(row, figures(p, len(spec.Targets))...)
		cw.Write(append(append(row, p.Note), energyFields(p)...))
	}
	cw.Flush()
	return cw.Error()
}

// energyColumns are the energy columns of the optima and points CSVs: the
// GPUs' energy a day at the point's average draw, per output token, and
// the cost of ownership an hour (search.Point).
var energyColumns = []string{"kwh_per_day", "j_per_output_token", "ownership_usd_per_h"}

// energyFields are p's energyColumns, empty when its energy is unknown.
func energyFields(p *search.Point) []string {
	if !p.EnergyKnown {
		return []string{"", "", ""}
	}
	return []string{ff(p.KWhPerDay()), ff(p.JPerOutputToken), ff(p.OwnershipUSDPerH)}
}

func splitHeader(h string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(h); i++ {
		if i == len(h) || h[i] == ',' {
			out = append(out, h[start:i])
			start = i + 1
		}
	}
	return out
}
