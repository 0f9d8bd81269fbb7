package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"splitplan/search"
)

// CurtailRow is one pool of one cluster at one rate in a curtailment
// report: how far its GPUs' power cap can drop, the other pool left at its
// own cap, with every SLO still met.
type CurtailRow struct {
	// Cluster names the cluster; RPS is the rate.
	Cluster string
	RPS     float64
	// Pool is "prompt", "token" or "baseline" (every machine).
	Pool string
	// Caps are the caps tried, descending; Rows their load rows.
	Caps []float64
	Rows []search.LoadRow
	// PoolKW is the pool's provisioned power at each cap.
	PoolKW []float64
}

// lowest is the index in r.Caps of the lowest cap such that it and every
// higher cap meet every SLO (-1: not even the highest does), and the index
// of the first cap below it (-1 when every cap passes).
func (r CurtailRow) lowest() (ok, broke int) {
	ok = -1
	for i := range r.Caps {
		if !r.Rows[i].Pass() {
			return ok, i
		}
		ok = i
	}
	return ok, -1
}

// PrintCurtailment prints, per cluster, rate and pool, the lowest cap that
// meets all the SLOs with the SLO binding there, the pool's provisioned and
// the cluster's drawn power at it, and what breaks at the next cap down.
func PrintCurtailment(w io.Writer, rows []CurtailRow) {
	if len(rows) == 0 {
		return
	}
	c := rows[0].Caps
	fmt.Fprintf(w, "\ncurtailment: the lowest GPU power cap (fraction of board power) each pool holds with every SLO met, the other pool at its own cap; caps tried %g down to %g\n",
		c[0], c[len(c)-1])
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tREQ/S\tPOOL\tLOWEST CAP\tBINDING SLO THERE\tPOOL kW\tAVG kW\tBELOW IT\t")
	for _, r := range rows {
		ok, broke := r.lowest()
		below := "holds at every cap tried"
		if broke >= 0 {
			below = fmt.Sprintf("%g: %s", r.Caps[broke], failure(r.Rows[broke]))
		}
		if ok < 0 {
			fmt.Fprintf(tw, "%s\t%g\t%s\t—\t—\t—\t—\tfails at its own cap (%s)\t\n", r.Cluster, r.RPS, r.Pool, failure(r.Rows[0]))
			continue
		}
		lr := r.Rows[ok]
		binding := ""
		if len(lr.Verdict.Figures) > 0 {
			f := lr.Verdict.BindingFigure()
			binding = f.Name() + " " + FigureText(f)
		}
		kw := "—"
		if finite(lr.AverageKW) {
			kw = fmt.Sprintf("%.1f", lr.AverageKW)
		}
		fmt.Fprintf(tw, "%s\t%g\t%s\t%g\t%s\t%.1f (%.1f at %g)\t%s\t%s\t\n", r.Cluster, r.RPS, r.Pool, r.Caps[ok], binding,
			r.PoolKW[ok], r.PoolKW[0], r.Caps[0], kw, below)
	}
	tw.Flush()
}

// failure names what failed in a load row: the binding SLO, or the drain;
// for a row that met every SLO over its run, its check over the longer
// one (search.VerifyLoad).
func failure(r search.LoadRow) string {
	if v := r.Verified; r.Verdict.Pass && v != nil && !v.Pass {
		return checkFailedText(v)
	}
	if !r.Verdict.Drained {
		note, _, _ := strings.Cut(r.Verdict.DrainNote, ":")
		return "unsustainable (" + note + ")"
	}
	if len(r.Verdict.Figures) == 0 {
		return "fails"
	}
	f := r.Verdict.BindingFigure()
	return f.Name() + " " + FigureText(f)
}
