package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"splitplan/costpower"
	"splitplan/plots"
	"splitplan/search"
)

// Colocated is the token-GPU column of the pairs table that holds the
// co-located baselines.
const Colocated = "co-located"

// PairRec is one cell of the GPU-pair table: the best design of one
// (prompt GPU, token GPU) pair over its tensor parallelisms (and batching
// policies), or why there is none.
type PairRec struct {
	// PromptGPU and TokenGPU label the pair ("H100", "B200"; TokenGPU is
	// Colocated for the baselines of PromptGPU).
	PromptGPU, TokenGPU string
	// Status is "found" (Design is the pair's best), "none" (no design of
	// the pair met the goal) or "bounded" (the analytic bound showed that
	// none of them can beat the best design; Bound is the pair's best
	// bound).
	Status string
	// Designs is the number of designs of the pair.
	Designs int
	// Design is the best design with its tensor parallelisms.
	Design            string
	PromptTP, TokenTP int
	// Prompt and Token are its machine counts (instances; a baseline:
	// Prompt machines, Token 0).
	Prompt, Token int
	// CostUSDPerH, PowerKW and CapacityRPS describe the optimum (capacity:
	// the goal's rate for the cost and power goals).
	CostUSDPerH, PowerKW, CapacityRPS float64
	// KWhPerDay and OwnershipUSDPerH are its GPU energy a day and cost of
	// ownership (NaN when unknown).
	KWhPerDay, OwnershipUSDPerH float64
	// Bound is the best analytic bound of a bounded pair ($/h or kW for
	// the rate goals, req/s for throughput), NaN otherwise.
	Bound float64
	// Best marks the overall winner's pair.
	Best bool
	// PromptProvenance and TokenProvenance are the pools' performance
	// model kinds (profiled, calibrated, spec-only).
	PromptProvenance, TokenProvenance string
}

// PairsOf groups a search's designs by (prompt GPU, token GPU) and keeps
// each pair's best: rows and cols are the prompt GPUs and token GPUs in
// the order the designs name them (cols end with Colocated when there are
// baselines). ok is false when the designs do not come from catalog
// machine types (nothing to group).
func PairsOf(res *search.Result, cat *costpower.Catalog) (recs []PairRec, rows, cols []string, ok bool) {
	// What a pair's designs add up to.
	type pair struct {
		key      [2]string
		designs  int
		best     int     // index in res.Designs of its best, −1 for none
		bound    float64 // its best analytic bound (NaN: none bounded out)
		searched bool    // some design of it was searched
	}
	var order []*pair
	pairs := map[[2]string]*pair{}
	seenRow, seenCol := map[string]bool{}, map[string]bool{}
	colocated := false
	tps := make([][2]int, len(res.Designs))
	for i, d := range res.Designs {
		pm, err1 := cat.Machine(d.PromptType)
		tm, err2 := cat.Machine(d.TokenType)
		if err1 != nil || err2 != nil {
			return nil, nil, nil, false
		}
		tps[i] = [2]int{pm.TensorParallel, tm.TensorParallel}
		k := [2]string{pm.GPULabel(), tm.GPULabel()}
		if d.Baseline {
			k[1], colocated = Colocated, true
		} else if !seenCol[k[1]] {
			seenCol[k[1]] = true
			cols = append(cols, k[1])
		}
		if !seenRow[k[0]] {
			seenRow[k[0]] = true
			rows = append(rows, k[0])
		}
		pr := pairs[k]
		if pr == nil {
			pr = &pair{key: k, best: -1, bound: math.NaN()}
			pairs[k] = pr
			order = append(order, pr)
		}
		pr.designs++
		pr.searched = pr.searched || !d.BoundPruned
		switch {
		case d.BoundPruned:
			if b := pr.bound; math.IsNaN(b) || (res.Goal.NeedsRate() && d.Bound < b) || (!res.Goal.NeedsRate() && d.Bound > b) {
				pr.bound = d.Bound
			}
		case d.Found:
			if pr.best < 0 || beatsIn(res, d, res.Designs[pr.best]) {
				pr.best = i
			}
		}
	}
	if colocated {
		cols = append(cols, Colocated)
	}
	for _, pr := range order {
		r := PairRec{PromptGPU: pr.key[0], TokenGPU: pr.key[1], Designs: pr.designs, Bound: math.NaN(), KWhPerDay: math.NaN(), OwnershipUSDPerH: math.NaN()}
		switch j := pr.best; {
		case j >= 0:
			d := res.Designs[j]
			r.Status, r.Design, r.PromptTP, r.TokenTP = "found", d.Design, tps[j][0], tps[j][1]
			r.Prompt, r.Token, r.CostUSDPerH, r.PowerKW, r.CapacityRPS = d.Best.Prompt, d.Best.Token, d.Best.CostUSDPerH, d.Best.PowerKW, d.CapacityRPS
			r.PromptProvenance, r.TokenProvenance = d.PromptProvenance.Kind.String(), d.TokenProvenance.Kind.String()
			if d.Best.EnergyKnown {
				r.KWhPerDay, r.OwnershipUSDPerH = d.Best.KWhPerDay(), d.Best.OwnershipUSDPerH
			}
			r.Best = res.Winner == j
		case !pr.searched && !math.IsNaN(pr.bound):
			r.Status, r.Bound = "bounded", pr.bound
		default:
			r.Status = "none"
		}
		recs = append(recs, r)
	}
	return recs, rows, cols, true
}

// beatsIn reports whether a is better than b for res's goal (its merit,
// then the cheaper or lower-power cluster).
func beatsIn(res *search.Result, a, b search.DesignResult) bool {
	ma, higher := res.Goal.Merit(a)
	mb, _ := res.Goal.Merit(b)
	if ma != mb {
		return (ma > mb) == higher
	}
	return a.Best.Machines() < b.Best.Machines()
}

// pairValue is the figure a pairs cell shows and is coloured by.
func pairValue(res *search.Result, r PairRec) (v float64, text string) {
	switch r.Status {
	case "bounded":
		if math.IsInf(r.Bound, 1) {
			return math.NaN(), "rate out of reach (bound)"
		}
		if res.Goal.NeedsRate() {
			return math.NaN(), "≥ " + meritText(res, r.Bound) + " (bound)"
		}
		return math.NaN(), "≤ " + meritText(res, r.Bound) + " (bound)"
	case "none":
		return math.NaN(), "none"
	}
	switch {
	case res.Goal == search.GoalPower:
		v = r.PowerKW
	case res.Goal == search.GoalEnergy:
		v = r.KWhPerDay
	case res.Goal == search.GoalTCO:
		v = r.OwnershipUSDPerH
	case res.Goal.NeedsRate():
		v = r.CostUSDPerH
	case res.Goal == search.GoalBatch:
		v = r.CapacityRPS / r.CostUSDPerH
	default:
		v = r.CapacityRPS
	}
	return v, meritText(res, v)
}

func meritText(res *search.Result, v float64) string {
	switch {
	case res.Goal == search.GoalPower:
		return fmt.Sprintf("%.1f kW", v)
	case res.Goal == search.GoalEnergy:
		return fmt.Sprintf("%.0f kWh/day", v)
	case res.Goal == search.GoalTCO:
		return fmt.Sprintf("$%.1f/h owned", v)
	case res.Goal.NeedsRate():
		return fmt.Sprintf("$%.0f/h", v)
	case res.Goal == search.GoalBatch:
		return fmt.Sprintf("%.3g req/s per $/h", v)
	}
	return fmt.Sprintf("%.4g req/s", v)
}

// PrintPairs prints the pairs table: prompt GPU rows × token GPU columns,
// each cell the best design's merit with its tensor parallelisms.
func PrintPairs(w io.Writer, res *search.Result, recs []PairRec, rows, cols []string) {
	cell := map[[2]string]PairRec{}
	for _, r := range recs {
		cell[[2]string{r.PromptGPU, r.TokenGPU}] = r
	}
	fmt.Fprintf(w, "\nGPU pairs: best %s per prompt GPU (rows) and token GPU (columns), with the prompt/token tensor parallelism\n", res.Goal.MeritName())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "PROMPT \\ TOKEN")
	for _, c := range cols {
		fmt.Fprintf(tw, "\t%s", c)
	}
	fmt.Fprintln(tw, "\t")
	for _, row := range rows {
		fmt.Fprint(tw, row)
		for _, col := range cols {
			r, ok := cell[[2]string{row, col}]
			text := "—"
			if ok {
				_, text = pairValue(res, r)
				if r.Status == "found" {
					if r.TokenGPU == Colocated {
						text += fmt.Sprintf(" tp%d", r.PromptTP)
					} else {
						text += fmt.Sprintf(" tp%d/tp%d", r.PromptTP, r.TokenTP)
					}
					if r.Best {
						text += " *"
					}
				}
			}
			fmt.Fprintf(tw, "\t%s", text)
		}
		fmt.Fprintln(tw, "\t")
	}
	tw.Flush()
	fmt.Fprintln(w, "(* the best design; — no design of the pair; \"(bound)\": every design of the pair was bounded out analytically, it cannot beat the best)")
}

// PairsCSVHeader is the header of WritePairsCSV.
const PairsCSVHeader = "prompt_gpu,token_gpu,status,designs,design,prompt_tp,token_tp,prompt_machines,token_machines,cost_usd_per_h,power_kw,capacity_rps,bound,best,prompt_provenance,token_provenance"

// WritePairsCSV writes one row per GPU pair.
func WritePairsCSV(w io.Writer, recs []PairRec) error {
	cw := csv.NewWriter(w)
	cw.Write(append(splitHeader(PairsCSVHeader), "kwh_per_day", "ownership_usd_per_h"))
	opt := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return ff(v)
	}
	for _, r := range recs {
		row := []string{r.PromptGPU, r.TokenGPU, r.Status, strconv.Itoa(r.Designs), r.Design, "", "", "", "", "", "", "", opt(r.Bound),
			strconv.FormatBool(r.Best), r.PromptProvenance, r.TokenProvenance}
		if r.Status == "found" {
			row[5], row[6], row[7], row[8] = strconv.Itoa(r.PromptTP), strconv.Itoa(r.TokenTP), strconv.Itoa(r.Prompt), strconv.Itoa(r.Token)
			row[9], row[10], row[11] = ff(r.CostUSDPerH), ff(r.PowerKW), ff(r.CapacityRPS)
		}
		cw.Write(append(row, opt(r.KWhPerDay), opt(r.OwnershipUSDPerH)))
	}
	cw.Flush()
	return cw.Error()
}

// ReadPairsCSV reads a file written by optimize --pairs.
func ReadPairsCSV(path string) ([]PairRec, error) {
	t, err := readCSVTable(path, PairsCSVHeader, "a GPU-pairs CSV (optimize --pairs)")
	if err != nil {
		return nil, err
	}
	energy, err := t.together("a GPU-pairs CSV", "kwh_per_day", "ownership_usd_per_h") // added last; older files lack them
	if err != nil {
		return nil, err
	}
	var out []PairRec
	for i := range t.rows {
		c := t.row(i)
		r := PairRec{PromptGPU: c.str("prompt_gpu"), TokenGPU: c.str("token_gpu"), Status: c.str("status"), Designs: c.integer("designs"),
			Design: c.str("design"), Bound: c.num("bound", true), Best: c.boolean("best"),
			PromptProvenance: c.str("prompt_provenance"), TokenProvenance: c.str("token_provenance"),
			KWhPerDay: math.NaN(), OwnershipUSDPerH: math.NaN()}
		if energy {
			r.KWhPerDay, r.OwnershipUSDPerH = c.num("kwh_per_day", true), c.num("ownership_usd_per_h", true)
		}
		switch r.Status {
		case "found":
			r.PromptTP, r.TokenTP, r.Prompt, r.Token = c.integer("prompt_tp"), c.integer("token_tp"), c.integer("prompt_machines"), c.integer("token_machines")
			r.CostUSDPerH, r.PowerKW, r.CapacityRPS = c.num("cost_usd_per_h", false), c.num("power_kw", false), c.num("capacity_rps", false)
		case "none", "bounded":
		default:
			c.fail("status", "found, none or bounded")
		}
		if c.err != nil {
			return nil, c.err
		}
		out = append(out, r)
	}
	return out, nil
}

// PairsFigure is the pairs table as a heatmap.
func PairsFigure(res *search.Result, recs []PairRec, rows, cols []string, subtitle string) plots.PairsFigure {
	ri, ci := map[string]int{}, map[string]int{}
	for i, r := range rows {
		ri[r] = i
	}
	for i, c := range cols {
		ci[c] = i
	}
	f := plots.PairsFigure{Title: "Best design per GPU pair: " + res.Goal.MeritName(), Subtitle: subtitle,
		Rows: rows, Cols: cols, XLabel: "token GPU", YLabel: "prompt GPU", ColorLabel: res.Goal.MeritLabel()}
	for _, r := range recs {
		v, text := pairValue(res, r)
		if r.Status == "found" {
			if r.TokenGPU == Colocated {
				text += fmt.Sprintf("\ntp%d ×%d", r.PromptTP, r.Prompt)
			} else {
				text += fmt.Sprintf("\ntp%d/tp%d %dP/%dT", r.PromptTP, r.TokenTP, r.Prompt, r.Token)
			}
		}
		text = strings.Replace(text, " (bound)", "\n(bound)", 1)
		pc := plots.PairCell{Row: ri[r.PromptGPU], Col: ci[r.TokenGPU], Value: v, Text: text, Bounded: r.Status == "bounded"}
		f.Cells = append(f.Cells, pc)
		if r.Best {
			f.HasWinner, f.WinRow, f.WinCol = true, pc.Row, pc.Col
		}
	}
	return f
}
