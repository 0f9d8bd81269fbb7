package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/gonum/stat"

	"splitplan/plots"
	"splitplan/search"
	"splitplan/traces"
)

// ObjectiveUnit is the unit of a rate goal's objective (ObjectiveOf), as
// the optimize table ranks designs by it (Goal.Merit): "$/h" (cost), "kW"
// (power), "kWh/day" (energy) or "owned $/h" (tco).
func ObjectiveUnit(g search.Goal) string {
	switch g {
	case search.GoalPower:
		return "kW"
	case search.GoalEnergy:
		return "kWh/day"
	case search.GoalTCO:
		return "owned $/h"
	}
	return "$/h"
}

// PlanText is "23P/7T" (a baseline: "125 machines").
func PlanText(baseline bool, p, t int) string {
	if baseline {
		return MachinesText(p)
	}
	return fmt.Sprintf("%dP/%dT", p, t)
}

// countsText is "23P/7T" (a baseline: "125").
func countsText(baseline bool, p, t int) string {
	if baseline {
		return strconv.Itoa(p)
	}
	return fmt.Sprintf("%dP/%dT", p, t)
}

// quantileCounts is the P10, P50 or P90 counts of a spread, "—" where the
// quantile falls on scenarios in which nothing met the SLOs.
func quantileCounts(baseline bool, sp search.Spread, j int) string {
	if math.IsInf(sp.Prompt[j], 1) || math.IsInf(sp.Token[j], 1) {
		return "—"
	}
	return countsText(baseline, int(sp.Prompt[j]), int(sp.Token[j]))
}

func objText(v float64) string {
	if math.IsInf(v, 1) || math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.1f", v)
}

// PrintRobust prints a robust search's answer after the nominal table:
// per design the nominal and robust plans with the P10/P50/P90 of the
// scenario optima, the winners, how often each design and GPU pair won a
// scenario, and the price of certainty of the robust winner.
func PrintRobust(w io.Writer, rr *search.RobustResult, p *search.Problem) {
	res := rr.Nominal
	unit := ObjectiveUnit(res.Goal)
	judged := ""
	if res.VerifyS > 0 {
		judged = fmt.Sprintf(", judged over its %s and over its traffic continued to %s, as the nominal optima are", traces.SecondsText(p.Workload.DurationS), traces.SecondsText(res.VerifyS))
	}
	fmt.Fprintf(w, "\nrobust    plans that meet every SLO in at least %d of %d scenarios (confidence %g); each scenario one draw of the performance model's validated error per GPU and phase and one workload seed%s\n",
		rr.Needed, rr.Scenarios, rr.Confidence, judged)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\nDESIGN\tNOMINAL\t%s\tPASSED\tROBUST\t%s\tPASSED\tP10\tP50\tP90\t%s P10/P50/P90\t\n", unit, unit, unit)
	shown, noPlan := 0, 0
	for i, d := range rr.Designs {
		nd := res.Designs[i]
		if d.BoundedOut {
			continue
		}
		shown++
		if !d.Found {
			noPlan++
		}
		nom, nomObj, nomPassed := "none", "—", "—"
		if nd.Found {
			nom = countsText(nd.Baseline, nd.Best.Prompt, nd.Best.Token)
			nomObj = objText(ObjectiveOf(res.Goal, nd.Best))
		}
		if d.NominalPassed >= 0 {
			nomPassed = fmt.Sprintf("%d/%d", d.NominalPassed, rr.Scenarios)
		}
		rob, robObj, passed := "none", "—", "—"
		if d.Found {
			rob, robObj, passed = countsText(d.Baseline, d.Prompt, d.Token), objText(d.Objective), fmt.Sprintf("%d/%d", d.Passed, rr.Scenarios)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s/%s/%s\t\n", d.Design, nom, nomObj, nomPassed, rob, robObj, passed,
			quantileCounts(d.Baseline, d.Spread, 0), quantileCounts(d.Baseline, d.Spread, 1), quantileCounts(d.Baseline, d.Spread, 2),
			objText(d.Spread.Objective[0]), objText(d.Spread.Objective[1]), objText(d.Spread.Objective[2]))
	}
	tw.Flush()
	fmt.Fprintf(w, "(P10, P50, P90: quantiles of the scenarios' own optima (%d), each pool's count taken on its own, so a column is not one plan; then of their %s)\n", rr.Scenarios, unit)
	if noPlan > 0 {
		fmt.Fprintf(w, "(ROBUST none: no plan of the design within --max-machines (%d a pool) meets every SLO in %d of the %d scenarios)\n", p.MaxMachines, rr.Needed, rr.Scenarios)
	}
	if note := BelowNominalNote(rr, unit); note != "" {
		fmt.Fprintln(w, note)
	}
	if out := len(rr.Designs) - shown; out > 0 {
		fmt.Fprintf(w, "(%d designs bounded out: their robust plan cannot beat the best)\n", out)
	}
	if line := robustVerifiedText(rr, p); line != "" {
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w)
	if res.Winner >= 0 {
		b := res.Designs[res.Winner]
		odds := ""
		if rr.NominalBestPassed() >= 0 {
			odds = fmt.Sprintf(", meets every SLO in %d of the %d scenarios", rr.NominalBestPassed(), rr.Scenarios)
		}
		fmt.Fprintf(w, "nominal   %s: %s, %s%s%s\n", b.Design, countsText(b.Baseline, b.Best.Prompt, b.Best.Token), objText(ObjectiveOf(res.Goal, b.Best)), " "+unit, odds)
	}
	if rr.Winner >= 0 {
		d := rr.Designs[rr.Winner]
		fmt.Fprintf(w, "robust    %s: %s, %s %s, meets every SLO in %d of the %d scenarios\n", d.Design, countsText(d.Baseline, d.Prompt, d.Token),
			objText(d.Objective), unit, d.Passed, rr.Scenarios)
		var lv []string
		for _, c := range d.Certainty {
			if c.Found {
				lv = append(lv, fmt.Sprintf("%g %s", c.Confidence, objText(c.Objective)))
			} else {
				lv = append(lv, fmt.Sprintf("%g none", c.Confidence))
			}
		}
		fmt.Fprintf(w, "certainty %s (%s) by confidence: %s\n", d.Design, unit, strings.Join(lv, " · "))
		if note := certaintyNoneNote(d, rr.Scenarios, p.MaxMachines); note != "" {
			fmt.Fprintf(w, "          %s\n", note)
		}
	} else {
		fmt.Fprintf(w, "robust    no design meets every SLO in %d of the %d scenarios with at most %d machines a pool (--max-machines; a larger bound may change that)\n", rr.Needed, rr.Scenarios, p.MaxMachines)
	}
	fmt.Fprintf(w, "wins      %s\n", WinsText(rr.DesignWins, rr.NoWinner, rr.Scenarios))
	fmt.Fprintf(w, "GPU pairs %s\n", WinsText(rr.PairWins, rr.NoWinner, rr.Scenarios))
	ratio := ""
	if rr.NominalTime > 0 && rr.ScenarioTime > 0 {
		ratio = fmt.Sprintf(": with the nominal search's %s, %.1f× its time", rr.NominalTime.Round(time.Millisecond), float64(rr.NominalTime+rr.ScenarioTime)/float64(rr.NominalTime))
	}
	long := ""
	if rr.ScenarioVerifications > 0 {
		long = fmt.Sprintf(" (and %d over %s)", rr.ScenarioVerifications, traces.SecondsText(res.VerifyS))
	}
	fmt.Fprintf(w, "scenarios %d simulations%s over %d scenarios, %s on %s%s\n", rr.Simulations, long, rr.Scenarios, rr.ScenarioTime.Round(time.Millisecond), plural(max(p.Parallel, 1), "worker", "workers"), ratio)
}

// BelowNominalNote explains robust plans whose objective is below their
// design's nominal optimum ("" when none is): the nominal optimum is the
// least objective that meets every SLO in the nominal run, so such a plan
// does not meet them there, though it does in enough scenarios. It
// happens where the scenarios' draws (the model's error, the workloads)
// fall kinder than the nominal run, most often at low confidence or with
// few scenarios, and a planner reading "robust" should know it.
func BelowNominalNote(rr *search.RobustResult, unit string) string {
	var names []string
	for i, d := range rr.Designs {
		nd := rr.Nominal.Designs[i]
		if d.BoundedOut || !d.Found || !nd.Found {
			continue
		}
		if nom := ObjectiveOf(rr.Nominal.Goal, nd.Best); d.Objective < nom-1e-9*math.Max(1, math.Abs(nom)) {
			names = append(names, d.Design)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("(ROBUST below NOMINAL for %s: the nominal optimum is the least %s meeting every SLO in the nominal run, so this plan misses one there, yet meets every SLO in at least %d of the %d scenarios, whose draws of the model's error and of the workload fell kinder than the nominal run; more --scenarios sample them better)",
		strings.Join(names, ", "), unit, rr.Needed, rr.Scenarios)
}

// certaintyNoneNote says why a confidence of the price of certainty has
// no plan ("" when every level has one): the scenarios in which no plan
// of the design within the machine bound meets the SLOs, which no plan
// can pass, else that no one plan passes that many.
func certaintyNoneNote(d search.RobustDesign, n, maxMachines int) string {
	var none []string
	least := 0
	for _, c := range d.Certainty {
		if !c.Found {
			none = append(none, fmt.Sprintf("%g", c.Confidence))
			if least == 0 {
				least = c.Needed
			}
		}
	}
	if len(none) == 0 {
		return ""
	}
	// The scenarios without a plan, and those of them whose largest
	// cluster fails an SLO nearly idle, by that SLO.
	infeasible, failsIdle := 0, 0
	idle := map[string]int{}
	for _, o := range d.Scenarios {
		if !o.Found {
			infeasible++
			if o.FailsIdle != "" {
				idle[o.FailsIdle]++
				failsIdle++
			}
		}
	}
	if infeasible > 0 && least > n-infeasible {
		why := ""
		if failsIdle > 0 {
			var parts []string
			for _, name := range slices.Sorted(maps.Keys(idle)) {
				parts = append(parts, fmt.Sprintf("%d %s", idle[name], name))
			}
			which := fmt.Sprintf("in %d of them", failsIdle)
			if failsIdle == infeasible {
				which = "in every one of them"
			}
			why = fmt.Sprintf("; %s its largest cluster fails an SLO even with its machines nearly idle (a tenth of the load: %s), so no bound on the machines helps there", which, strings.Join(parts, ", "))
		}
		return fmt.Sprintf("(none at %s: in %d of the %d scenarios no plan of %s within --max-machines (%d a pool) meets every SLO, so none passes %d%s)",
			strings.Join(none, ", "), infeasible, n, d.Design, maxMachines, least, why)
	}
	return fmt.Sprintf("(none at %s: no one plan of %s within --max-machines (%d a pool) meets every SLO in %d of the %d scenarios)",
		strings.Join(none, ", "), d.Design, maxMachines, least, n)
}

// WinsText is "scenarios won: Splitwise-HH 20/32 · Splitwise-HA 12/32": how
// often each of ws was a scenario's best (none: the scenarios without one).
func WinsText(ws []search.Wins, none, n int) string {
	var parts []string
	for _, x := range ws {
		parts = append(parts, fmt.Sprintf("%s %d/%d", x.Name, x.Scenarios, n))
	}
	if none > 0 {
		parts = append(parts, fmt.Sprintf("none %d/%d", none, n))
	}
	return "scenarios won: " + strings.Join(parts, " · ")
}

// ObjectiveOf is a point's objective as a rate goal weighs it
// (Goal.Merit), in ObjectiveUnit.
func ObjectiveOf(g search.Goal, pt search.Point) float64 {
	v, _ := g.Merit(search.DesignResult{Best: pt})
	return v
}

// RobustCSVHeader is WriteRobustCSV's header. The objective columns are
// in the goal's unit ($/h for cost, kW for power); a quantile or plan
// that does not exist is empty.
const RobustCSVHeader = "design,goal,confidence,scenarios,needed,nominal_found,nominal_prompt,nominal_token,nominal_objective," +
	"robust_found,robust_prompt,robust_token,robust_objective,robust_cost_usd_per_h,robust_power_kw,passed," +
	"p10_prompt,p50_prompt,p90_prompt,p10_token,p50_token,p90_token,p10_objective,p50_objective,p90_objective,bounded_out,scenarios_won"

// RobustRec is one row of a robust CSV.
type RobustRec struct {
	Design, Goal                             string
	Confidence                               float64
	Scenarios, Needed                        int
	NominalFound                             bool
	NominalPrompt, NominalToken              int
	NominalObjective                         float64
	RobustFound                              bool
	RobustPrompt, RobustToken                int
	RobustObjective, RobustCost, RobustPower float64
	Passed                                   int
	PromptQ, TokenQ, ObjectiveQ              [3]float64 // +Inf: none
	BoundedOut                               bool
	ScenariosWon                             int
	// NominalPassed is the scenarios the nominal optimum meets every SLO
	// in (search.RobustDesign.NominalPassed; −1: not counted).
	NominalPassed int
	// PassedExact reports that Passed counts every scenario the robust
	// plan meets every SLO in, as files are written since the search
	// counts them all (column passed_exact); in older files Passed is a
	// lower bound, the scenarios the scan asked before it had enough.
	PassedExact bool
}

// RobustOf converts a robust result into its CSV rows.
func RobustOf(rr *search.RobustResult) []RobustRec {
	won := map[string]int{}
	for _, x := range rr.DesignWins {
		won[x.Name] = x.Scenarios
	}
	res := rr.Nominal
	var out []RobustRec
	for i, d := range rr.Designs {
		nd := res.Designs[i]
		r := RobustRec{Design: d.Design, Goal: fmt.Sprint(res.Goal), Confidence: rr.Confidence, Scenarios: rr.Scenarios, Needed: rr.Needed,
			NominalFound: nd.Found, RobustFound: d.Found, BoundedOut: d.BoundedOut, ScenariosWon: won[d.Design], NominalPassed: d.NominalPassed,
			PassedExact: d.Found}
		if nd.Found {
			r.NominalPrompt, r.NominalToken, r.NominalObjective = nd.Best.Prompt, nd.Best.Token, ObjectiveOf(res.Goal, nd.Best)
		}
		if d.Found {
			r.RobustPrompt, r.RobustToken, r.RobustObjective, r.RobustCost, r.RobustPower, r.Passed = d.Prompt, d.Token, d.Objective, d.CostUSDPerH, d.PowerKW, d.Passed
		}
		r.PromptQ, r.TokenQ, r.ObjectiveQ = d.Spread.Prompt, d.Spread.Token, d.Spread.Objective
		if d.BoundedOut {
			for j := range 3 {
				r.PromptQ[j], r.TokenQ[j], r.ObjectiveQ[j] = math.Inf(1), math.Inf(1), math.Inf(1)
			}
		}
		out = append(out, r)
	}
	return out
}

// WriteRobustCSV writes one row per design of a robust search.
func WriteRobustCSV(w io.Writer, rr *search.RobustResult) error {
	cw := csv.NewWriter(w)
	cw.Write(append(splitHeader(RobustCSVHeader), "nominal_passed", "passed_exact"))
	opt := func(ok bool, s string) string {
		if !ok {
			return ""
		}
		return s
	}
	q := func(v float64) string {
		if math.IsInf(v, 1) {
			return ""
		}
		return ff(v)
	}
	for _, r := range RobustOf(rr) {
		row := []string{r.Design, r.Goal, ff(r.Confidence), strconv.Itoa(r.Scenarios), strconv.Itoa(r.Needed),
			strconv.FormatBool(r.NominalFound), opt(r.NominalFound, strconv.Itoa(r.NominalPrompt)), opt(r.NominalFound, strconv.Itoa(r.NominalToken)),
			opt(r.NominalFound, ff(r.NominalObjective)),
			strconv.FormatBool(r.RobustFound), opt(r.RobustFound, strconv.Itoa(r.RobustPrompt)), opt(r.RobustFound, strconv.Itoa(r.RobustToken)),
			opt(r.RobustFound, ff(r.RobustObjective)), opt(r.RobustFound, ff(r.RobustCost)), opt(r.RobustFound, ff(r.RobustPower)),
			opt(r.RobustFound, strconv.Itoa(r.Passed))}
		for _, qs := range [][3]float64{r.PromptQ, r.TokenQ, r.ObjectiveQ} {
			for _, v := range qs {
				row = append(row, q(v))
			}
		}
		row = append(row, strconv.FormatBool(r.BoundedOut), strconv.Itoa(r.ScenariosWon), opt(r.NominalPassed >= 0, strconv.Itoa(r.NominalPassed)),
			opt(r.RobustFound, strconv.FormatBool(r.PassedExact)))
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

// ReadRobustCSV reads a file written by optimize --confidence --out.
func ReadRobustCSV(path string) ([]RobustRec, error) {
	t, err := readCSVTable(path, RobustCSVHeader, "a robust optima CSV (optimize --confidence --out)")
	if err != nil {
		return nil, err
	}
	if len(t.rows) == 0 {
		return nil, inputf("%s: no designs: the file has a header only", path)
	}
	var out []RobustRec
	for i := range t.rows {
		c := t.row(i)
		r := RobustRec{Design: c.str("design"), Goal: c.str("goal"), Confidence: c.num("confidence", false), Scenarios: c.integer("scenarios"),
			Needed: c.integer("needed"), NominalFound: c.boolean("nominal_found"), RobustFound: c.boolean("robust_found"),
			BoundedOut: c.boolean("bounded_out"), ScenariosWon: c.integer("scenarios_won"), NominalPassed: -1}
		if _, ok := t.cols["nominal_passed"]; ok && c.str("nominal_passed") != "" {
			// (Written since the nominal optima were counted; older files
			// lack the column.)
			r.NominalPassed = c.integer("nominal_passed")
			if c.err == nil && r.NominalPassed > r.Scenarios {
				c.fail("nominal_passed", fmt.Sprintf("at most the scenarios (%d)", r.Scenarios))
			}
		}
		if r.NominalFound {
			r.NominalPrompt, r.NominalToken, r.NominalObjective = c.integer("nominal_prompt"), c.integer("nominal_token"), c.num("nominal_objective", false)
		}
		if r.RobustFound {
			r.RobustPrompt, r.RobustToken, r.RobustObjective = c.integer("robust_prompt"), c.integer("robust_token"), c.num("robust_objective", false)
			r.RobustCost, r.RobustPower, r.Passed = c.num("robust_cost_usd_per_h", false), c.num("robust_power_kw", false), c.integer("passed")
			if c.str("passed_exact") != "" {
				// (Written since the search counts every scenario;
				// older files lack the column: a lower bound.)
				r.PassedExact = c.boolean("passed_exact")
			}
			if c.err == nil && r.Passed > r.Scenarios {
				c.fail("passed", fmt.Sprintf("at most the scenarios (%d)", r.Scenarios))
			}
		}
		for j, pre := range []string{"p10_", "p50_", "p90_"} {
			for _, x := range []struct {
				col string
				dst *[3]float64
			}{{"prompt", &r.PromptQ}, {"token", &r.TokenQ}, {"objective", &r.ObjectiveQ}} {
				v := c.num(pre+x.col, true)
				if math.IsNaN(v) {
					v = math.Inf(1)
				}
				x.dst[j] = v
			}
		}
		if c.err != nil {
			return nil, c.err
		}
		out = append(out, r)
	}
	return out, nil
}

type jsonCertainty struct {
	Confidence float64  `json:"confidence"`
	Needed     int      `json:"needed"`
	Found      bool     `json:"found"`
	Prompt     int      `json:"prompt_machines,omitempty"`
	Token      int      `json:"token_machines,omitempty"`
	Objective  *float64 `json:"objective,omitempty"`
}

type jsonScenarioOptimum struct {
	Found     bool     `json:"found"`
	Prompt    int      `json:"prompt_machines,omitempty"`
	Token     int      `json:"token_machines,omitempty"`
	Objective *float64 `json:"objective,omitempty"`
	FailsIdle string   `json:"fails_idle,omitempty"`
}

type jsonRobustDesign struct {
	Design      string                `json:"design"`
	Found       bool                  `json:"found"`
	Prompt      int                   `json:"prompt_machines,omitempty"`
	Token       int                   `json:"token_machines,omitempty"`
	Objective   *float64              `json:"objective,omitempty"`
	CostUSDPerH *float64              `json:"cost_usd_per_h,omitempty"`
	PowerKW     *float64              `json:"power_kw,omitempty"`
	Passed      int                   `json:"passed_scenarios,omitempty"`
	NominalPass *int                  `json:"nominal_passed_scenarios,omitempty"`
	PromptQ     []*float64            `json:"prompt_p10_p50_p90,omitempty"`
	TokenQ      []*float64            `json:"token_p10_p50_p90,omitempty"`
	ObjectiveQ  []*float64            `json:"objective_p10_p50_p90,omitempty"`
	Certainty   []jsonCertainty       `json:"price_of_certainty,omitempty"`
	Scenarios   []jsonScenarioOptimum `json:"scenario_optima,omitempty"`
	BoundedOut  bool                  `json:"bounded_out,omitempty"`
	Bound       *float64              `json:"bound,omitempty"`
}

type jsonWins struct {
	Name      string `json:"name"`
	Scenarios int    `json:"scenarios"`
}

type jsonRobust struct {
	Confidence    float64            `json:"confidence"`
	Scenarios     int                `json:"scenarios"`
	Needed        int                `json:"needed"`
	Objective     string             `json:"objective_unit"`
	WorkloadSeeds []uint64           `json:"workload_seeds"`
	Best          string             `json:"best,omitempty"`
	NominalPassed *int               `json:"nominal_best_passed_scenarios,omitempty"`
	Designs       []jsonRobustDesign `json:"designs"`
	DesignWins    []jsonWins         `json:"design_wins"`
	PairWins      []jsonWins         `json:"gpu_pair_wins"`
	NoWinner      int                `json:"scenarios_without_winner"`
	Simulations   int64              `json:"simulations"`
	Verifications int64              `json:"verifications,omitempty"`
}

func fptr(v float64) *float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}

func quantPtrs(q [3]float64) []*float64 { return []*float64{fptr(q[0]), fptr(q[1]), fptr(q[2])} }

// WriteRobustJSON writes a robust search (rr, nil without --confidence)
// and a sensitivity analysis (rows, nil without --sensitivity) as
// indented JSON: the nominal optima (as WriteOptimaJSON writes them)
// under "nominal", the robust answer under "robust", the sensitivity rows
// under "sensitivity" (a quantile or plan that does not exist is absent
// or null).
func WriteRobustJSON(w io.Writer, nominal *search.Result, rr *search.RobustResult, rows []search.SensitivityRow, p *search.Problem) error {
	out := struct {
		Nominal     jsonResult        `json:"nominal"`
		Robust      *jsonRobust       `json:"robust,omitempty"`
		Sensitivity []jsonSensitivity `json:"sensitivity,omitempty"`
	}{Nominal: optimaJSON(nominal, p)}
	if rr != nil {
		jr := robustJSON(rr)
		out.Robust = &jr
	}
	if rows != nil {
		for _, r := range SensitivityRecs(nominal, rows)[1:] {
			js := jsonSensitivity{Input: r.Input, Change: r.Change}
			if r.Found {
				js.Best, js.Prompt, js.Token, js.Objective = r.Design, r.Prompt, r.Token, fptr(r.Objective)
			}
			out.Sensitivity = append(out.Sensitivity, js)
		}
	}
	return writeJSON(w, out)
}

type jsonSensitivity struct {
	Input     string   `json:"input"`
	Change    float64  `json:"change"`
	Best      string   `json:"best,omitempty"`
	Prompt    int      `json:"prompt_machines,omitempty"`
	Token     int      `json:"token_machines,omitempty"`
	Objective *float64 `json:"objective,omitempty"`
}

func robustJSON(rr *search.RobustResult) jsonRobust {
	jr := jsonRobust{Confidence: rr.Confidence, Scenarios: rr.Scenarios, Needed: rr.Needed, Objective: ObjectiveUnit(rr.Nominal.Goal),
		WorkloadSeeds: rr.WorkloadSeeds, NoWinner: rr.NoWinner, Simulations: rr.Simulations, Verifications: rr.ScenarioVerifications, DesignWins: []jsonWins{}, PairWins: []jsonWins{}}
	if rr.Winner >= 0 {
		jr.Best = rr.Designs[rr.Winner].Design
	}
	if n := rr.NominalBestPassed(); n >= 0 {
		jr.NominalPassed = &n
	}
	for _, d := range rr.Designs {
		jd := jsonRobustDesign{Design: d.Design, Found: d.Found, BoundedOut: d.BoundedOut}
		if d.BoundedOut {
			jd.Bound = fptr(d.Bound)
			jr.Designs = append(jr.Designs, jd)
			continue
		}
		if d.Found {
			jd.Prompt, jd.Token, jd.Objective, jd.CostUSDPerH, jd.PowerKW, jd.Passed = d.Prompt, d.Token, fptr(d.Objective), fptr(d.CostUSDPerH), fptr(d.PowerKW), d.Passed
		}
		if d.NominalPassed >= 0 {
			n := d.NominalPassed
			jd.NominalPass = &n
		}
		jd.PromptQ, jd.TokenQ, jd.ObjectiveQ = quantPtrs(d.Spread.Prompt), quantPtrs(d.Spread.Token), quantPtrs(d.Spread.Objective)
		for _, c := range d.Certainty {
			jc := jsonCertainty{Confidence: c.Confidence, Needed: c.Needed, Found: c.Found}
			if c.Found {
				jc.Prompt, jc.Token, jc.Objective = c.Prompt, c.Token, fptr(c.Objective)
			}
			jd.Certainty = append(jd.Certainty, jc)
		}
		for _, o := range d.Scenarios {
			js := jsonScenarioOptimum{Found: o.Found, FailsIdle: o.FailsIdle}
			if o.Found {
				js.Prompt, js.Token, js.Objective = o.Prompt, o.Token, fptr(o.Objective)
			}
			jd.Scenarios = append(jd.Scenarios, js)
		}
		jr.Designs = append(jr.Designs, jd)
	}
	for _, x := range rr.DesignWins {
		jr.DesignWins = append(jr.DesignWins, jsonWins(x))
	}
	for _, x := range rr.PairWins {
		jr.PairWins = append(jr.PairWins, jsonWins(x))
	}
	return jr
}

// WriteRobustPlots writes the robust search's figures into dir, PNG and
// SVG: the price of certainty (certainty: each design's robust objective
// against the confidence, from the same scenarios) and the spread of the
// optimal machine counts per design (spread). A GPU-pair space
// (p.PruneDesigns) shows its eight best robust designs.
func WriteRobustPlots(dir string, rr *search.RobustResult, p *search.Problem) ([]string, error) {
	fd, err := newFigureDir(dir)
	if err != nil {
		return nil, err
	}
	unit := ObjectiveUnit(rr.Nominal.Goal)
	source := fmt.Sprintf("%s; %s, %s request sizes, %gs per simulation, %d scenarios from seed %d", GoalTitle(rr.Nominal), p.Model,
		p.Workload.Sizes.Name(), p.Workload.DurationS, rr.Scenarios, p.Workload.Seed)
	designs := robustShown(rr, p.PruneDesigns)
	cf := plots.CertaintyFigure{Title: "Price of certainty: the robust plan's " + unit + " against the confidence", Subtitle: source, YLabel: "robust plan, " + unit}
	sf := plots.SpreadFigure{Title: "Optimal machines per design across the scenarios", Subtitle: source + "; bar: P10–P90", YLabel: "machines (prompt + token)"}
	for _, i := range designs {
		d := rr.Designs[i]
		s := plots.CertaintySeries{Name: d.Design}
		for _, c := range d.Certainty {
			s.Confidence = append(s.Confidence, c.Confidence)
			v := math.NaN()
			if c.Found {
				v = c.Objective
			}
			s.Objective = append(s.Objective, v)
		}
		cf.Series = append(cf.Series, s)
		sd := plots.SpreadDesign{Name: d.Design, Nominal: math.NaN(), Robust: math.NaN()}
		var tot []float64
		for _, o := range d.Scenarios {
			v := math.Inf(1)
			if o.Found {
				v = float64(o.Prompt + o.Token)
				sd.Scenarios = append(sd.Scenarios, v)
			}
			tot = append(tot, v)
		}
		sort.Float64s(tot)
		if len(tot) > 0 {
			sd.P10 = stat.Quantile(0.1, stat.Empirical, tot, nil)
			sd.P50 = stat.Quantile(0.5, stat.Empirical, tot, nil)
			sd.P90 = stat.Quantile(0.9, stat.Empirical, tot, nil)
		}
		if nd := rr.Nominal.Designs[i]; nd.Found {
			sd.Nominal = float64(nd.Best.Machines())
		}
		if d.Found {
			sd.Robust = float64(d.Prompt + d.Token)
		}
		sf.Designs = append(sf.Designs, sd)
	}
	if err := fd.both("certainty", func(path string) error { return plots.Certainty(path, cf) }); err != nil {
		return fd.written, err
	}
	if err := fd.both("spread", func(path string) error { return plots.Spread(path, sf) }); err != nil {
		return fd.written, err
	}
	return fd.written, nil
}

// robustShown are the designs the robust figures show: every design not
// bounded out, or in a GPU-pair space the eight with the best robust
// plans.
func robustShown(rr *search.RobustResult, pairs bool) []int {
	var idx []int
	for i, d := range rr.Designs {
		if !d.BoundedOut {
			idx = append(idx, i)
		}
	}
	if !pairs {
		return idx
	}
	var found []int
	for _, i := range idx {
		if rr.Designs[i].Found {
			found = append(found, i)
		}
	}
	sort.SliceStable(found, func(a, b int) bool { return rr.Designs[found[a]].Objective < rr.Designs[found[b]].Objective })
	return found[:min(len(found), 8)]
}

func sortFloats(v []float64) { sort.Float64s(v) }

func stableSortBy[T any](v []T, less func(a, b T) bool) {
	sort.SliceStable(v, func(i, j int) bool { return less(v[i], v[j]) })
}

// robustVerifiedText says how the robust plans fared over the nominal
// traffic continued, as the nominal optima were checked ("" when no
// check ran): the plans that failed, by name. The check is reported, not
// required: a robust plan stands on its scenarios (each judged over its
// own traffic continued as long), of which the nominal run is not one.
func robustVerifiedText(rr *search.RobustResult, p *search.Problem) string {
	if !(rr.Nominal.VerifyS > 0) {
		return ""
	}
	var failed []string
	checked := 0
	for _, d := range rr.Designs {
		v := d.Verified
		if v == nil {
			continue
		}
		checked++
		if !v.Pass {
			failed = append(failed, fmt.Sprintf("%s %s (%s)", d.Design, countsText(d.Baseline, d.Prompt, d.Token), verifiedText(v)))
		}
	}
	if checked == 0 {
		return ""
	}
	over := fmt.Sprintf("over %s of the nominal traffic (the search's %s continued), as the nominal optima were", traces.SecondsText(rr.Nominal.VerifyS), traces.SecondsText(p.Workload.DurationS))
	if len(failed) == 0 {
		return fmt.Sprintf("(verify: every robust plan also met every SLO %s)", over)
	}
	return fmt.Sprintf("(verify: checked %s, %s did not hold; a robust plan stands on its scenarios, of which the nominal run is not one: %s)",
		over, plural(len(failed), "robust plan", "robust plans"), strings.Join(failed, "; "))
}
