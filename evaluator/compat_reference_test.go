package evaluator_test

import (
	"compress/gzip"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"splitplan/resolve"
	"strconv"
	"strings"
	"sync"
	"testing"

	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/internal/gendata"
	"splitplan/slo"
	"splitplan/traces"
)

// refDir finds ../shared/data/splitwise-sim-reference, or skips.
func refDir(t testing.TB) string {
	t.Helper()
	p, err := gendata.Find(filepath.Join("shared", "data", "splitwise-sim-reference", "runs.csv"), "none")
	if err != nil {
		t.Skip("no ../shared/data/splitwise-sim-reference: " + err.Error())
	}
	return filepath.Dir(p)
}

// readCSV reads a CSV (gzipped when its name ends in .gz) as maps by
// column name.
func readCSV(t testing.TB, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		r = z
	}
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := make([]map[string]string, 0, len(rows)-1)
	for _, row := range rows[1:] {
		m := make(map[string]string, len(row))
		for i, c := range rows[0] {
			m[c] = row[i]
		}
		out = append(out, m)
	}
	return out
}

func num(t testing.TB, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("number %q: %v", s, err)
	}
	return v
}

// refRun is one reference run of runs.csv.
type refRun struct {
	id, design, trace string
	prompt, token     int
	row               map[string]string
}

// refTrace reads a SplitwiseSim trace with its arrivals as they are (not
// rebased), so event times are the reference's to the bit.
func refTrace(t testing.TB, path string) []traces.Request {
	rows := readCSV(t, path)
	reqs := make([]traces.Request, len(rows))
	for i, r := range rows {
		reqs[i] = traces.Request{ID: int(num(t, r["request_id"])), Arrival: num(t, r["arrival_timestamp"]),
			PromptTokens: int(num(t, r["prompt_size"])), OutputTokens: int(num(t, r["token_size"]))}
	}
	return reqs
}

// compatOutcome is one run's comparison with the reference.
type compatOutcome struct {
	run               refRun
	requests, exact   int
	maxTTFT, maxE2E   float64
	machineMismatches int
	maxPctRel         float64
	figures           [9]float64 // our nine percentiles
	refFigures        [9]float64
	slowdowns         [9]float64
	pass, refPass     bool
	err               error
}

var nineCols = [9]string{"ttft_p50", "ttft_p90", "ttft_p99", "tbt_p50", "tbt_p90", "tbt_p99", "e2e_p50", "e2e_p90", "e2e_p99"}

// runReference replays one reference run in compat mode and compares it.
func runReference(t testing.TB, dir string, run refRun, reqs []traces.Request, ref slo.Reference) compatOutcome {
	out := compatOutcome{run: run}
	name := strings.TrimPrefix(run.design, "Splitwise-")
	prompt, token := run.prompt, run.token
	if strings.HasPrefix(run.design, "Baseline") {
		token = 0
	}
	cl, err := resolve.NamedCluster(costpower.Default(), builtin(true), name, prompt, token, "bloom-176b")
	if err != nil {
		out.err = err
		return out
	}
	res, err := evaluator.Evaluate(cl.Sim(), reqs, evaluator.Options{Compat: true})
	if err != nil {
		out.err = err
		return out
	}
	byID := make(map[int]*evaluator.RequestResult, len(res.Requests))
	for i := range res.Requests {
		byID[res.Requests[i].ID] = &res.Requests[i]
	}
	// Reference instance index → splitplan machine: for HA and HHcap the
	// token-pool SKU's instances come first.
	tokenFirst := name == "HA" || name == "HHcap"
	machineOf := func(runner string) int {
		i, err := strconv.Atoi(runner[strings.LastIndexByte(runner, '_')+1:])
		if err != nil {
			return -1
		}
		if tokenFirst {
			if i < token {
				return prompt + i
			}
			return i - token
		}
		return i
	}
	nodes := readCSV(t, filepath.Join(dir, "runs", run.id, "request_nodes.csv.gz"))
	for _, n := range nodes {
		r := byID[int(num(t, n["request_id"]))]
		if r == nil {
			continue
		}
		switch n["node_type"] {
		case "PROMPT":
			if machineOf(n["runner"]) != r.PromptMachine {
				out.machineMismatches++
			}
		case "TOKEN":
			if machineOf(n["runner"]) != r.TokenMachine {
				out.machineMismatches++
			}
		}
	}
	det := readCSV(t, filepath.Join(dir, "runs", run.id, "detailed.csv.gz"))
	out.requests = len(det)
	for _, d := range det {
		r := byID[int(num(t, d["request_ids"]))]
		if r == nil {
			out.maxTTFT = math.Inf(1)
			continue
		}
		dt := math.Abs(r.TTFTS - num(t, d["ttft_times"]))
		de := math.Abs(r.E2ES - num(t, d["response_times"]))
		out.maxTTFT, out.maxE2E = max(out.maxTTFT, dt), max(out.maxE2E, de)
		if dt <= 1e-9 && de <= 1e-9 {
			out.exact++
		}
	}
	var series [3][]float64
	for _, r := range res.Requests {
		series[0] = append(series[0], r.TTFTS)
		series[1] = append(series[1], r.TBTReferenceS)
		series[2] = append(series[2], r.E2ES)
	}
	for k := range series {
		sort.Float64s(series[k])
		for j, p := range [3]float64{50, 90, 99} {
			i := 3*k + j
			out.figures[i] = slo.Percentile(series[k], p)
			out.refFigures[i] = num(t, run.row[nineCols[i]])
			out.maxPctRel = max(out.maxPctRel, math.Abs(out.figures[i]-out.refFigures[i])/out.refFigures[i])
		}
	}
	v := slo.Default().Check(res, ref)
	out.pass = v.Pass
	for i, f := range v.Figures {
		if i < 9 {
			out.slowdowns[i] = f.Measured
		}
	}
	out.refPass = run.row["meets_9_slos"] == "True"
	return out
}

// replayReference replays every reference run (in parallel) and returns
// the outcomes in runs.csv's order.
func replayReference(t testing.TB) []compatOutcome {
	dir := refDir(t)
	var runs []refRun
	for _, r := range readCSV(t, filepath.Join(dir, "runs.csv")) {
		runs = append(runs, refRun{id: r["run_id"], design: r["design"], trace: r["trace"],
			prompt: int(num(t, r["prompt_machines"])), token: int(num(t, r["token_machines"])), row: r})
	}
	traceOf := map[string][]traces.Request{}
	for _, r := range runs {
		if traceOf[r.trace] == nil {
			traceOf[r.trace] = refTrace(t, filepath.Join(dir, "traces", r.trace+".csv"))
		}
	}
	solo, err := resolve.NamedCluster(costpower.Default(), builtin(true), "Baseline-A100", 1, 0, "bloom-176b")
	if err != nil {
		t.Fatal(err)
	}
	ref := slo.Reference{Perf: solo.PromptPerf, Compat: true}
	out := make([]compatOutcome, len(runs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := range runs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i] = runReference(t, dir, runs[i], traceOf[runs[i].trace], ref)
		}()
	}
	wg.Wait()
	return out
}

// TestCompatReproducesReference replays the 56 reference runs of
// ../shared/data/splitwise-sim-reference in compat mode: every request on
// the same prompt and token machines with TTFT and E2E within 1e-9 s, the
// nine percentiles of runs.csv within 1e-9 relative, the same nine-SLO
// verdict, and on the Figure 12 grid the cheapest feasible cell at 29
// machines.
func TestCompatReproducesReference(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("replays 56 reference runs")
	}
	outs := replayReference(t)
	exactRuns := 0
	cheapest := math.MaxInt
	for _, o := range outs {
		if o.err != nil {
			t.Errorf("%s: %v", o.run.id, o.err)
			continue
		}
		ok := o.exact == o.requests && o.machineMismatches == 0 && o.maxPctRel <= 1e-9
		if ok {
			exactRuns++
		} else {
			t.Errorf("%s: %d of %d requests exact (max |ΔTTFT| %.3g s, |ΔE2E| %.3g s), %d machine mismatches, percentiles within %.3g relative",
				o.run.id, o.exact, o.requests, o.maxTTFT, o.maxE2E, o.machineMismatches, o.maxPctRel)
		}
		if o.pass != o.refPass {
			t.Errorf("%s: nine SLOs pass %v, reference %v (slowdowns %v)", o.run.id, o.pass, o.refPass, o.slowdowns)
		}
		if strings.HasPrefix(o.run.id, "f12_") && o.pass {
			cheapest = min(cheapest, o.run.prompt+o.run.token)
		}
	}
	if cheapest != 29 {
		t.Errorf("Figure 12 grid: cheapest feasible cell has %d machines, want 29", cheapest)
	}
	t.Logf("%d of %d reference runs reproduced request by request", exactRuns, len(outs))
	if os.Getenv("SPLITPLAN_COMPAT_DOC") != "" {
		writeCompatDoc(t, compatTable(outs))
	}
}

// compatTable renders the outcomes as the Markdown table of docs/compat.md.
func compatTable(outs []compatOutcome) string {
	var b strings.Builder
	b.WriteString("| run | design | P/T | requests matched | max abs Δ s | TTFT p50 / p99 s | reference | TBT p50 / p99 s | reference | E2E p50 / p99 s | reference | 9 SLOs (reference) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	yes := map[bool]string{true: "pass", false: "fail"}
	for _, o := range outs {
		f, r := o.figures, o.refFigures
		fmt.Fprintf(&b, "| %s | %s | %d/%d | %d/%d | %.0e | %.4f / %.4f | %.4f / %.4f | %.4f / %.4f | %.4f / %.4f | %.3f / %.3f | %.3f / %.3f | %s (%s) |\n",
			o.run.id, o.run.design, o.run.prompt, o.run.token, o.exact, o.requests, max(o.maxTTFT, o.maxE2E),
			f[0], f[2], r[0], r[2], f[3], f[5], r[3], r[5], f[6], f[8], r[6], r[8], yes[o.pass], yes[o.refPass])
	}
	return b.String()
}

// Markers of the generated table in docs/compat.md.
const (
	compatTableBegin = "<!-- begin compat table: generated by SPLITPLAN_COMPAT_DOC=1 go test -run TestCompatReproducesReference ./evaluator/ -->\n"
	compatTableEnd   = "<!-- end compat table -->\n"
)

// writeCompatDoc replaces the table between the markers of docs/compat.md.
func writeCompatDoc(t *testing.T, table string) {
	path := filepath.Join("..", "docs", "compat.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, compatTableBegin), strings.Index(s, compatTableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s: no table markers", path)
	}
	s = s[:i+len(compatTableBegin)] + table + s[j:]
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
