package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"splitplan/costpower"
	"splitplan/report"
)

// roundTripModel and roundTripLoad keep the round trip's runs small: a
// model every built-in GPU holds at tp1, half a request per second.
const roundTripModel = "llama3.1-8b"

var roundTripLoad = []string{"--model", roundTripModel, "--rps", "0.5", "--duration", "10s"}

// noCheck turns off the check over a longer run of sweep and evaluate
// (--verify), which the names do not need.
var noCheck = []string{"--verify", "0"}

// optimaOf runs optimize with args and --out, and returns the optima CSV's
// path and its rows.
func optimaOf(t *testing.T, dir, name string, args ...string) (string, []report.OptimumRec) {
	t.Helper()
	path := filepath.Join(dir, name+".csv")
	code, _, errs := runCLI(t, append(append([]string{"optimize"}, args...), "--out", path)...)
	if code != 0 {
		t.Fatalf("optimize %s: exit %d: %s", strings.Join(args, " "), code, errs)
	}
	optima, err := report.ReadOptimaCSV(path)
	if err != nil {
		t.Fatalf("optimize %s wrote a CSV its own reader rejects: %v", strings.Join(args, " "), err)
	}
	if len(optima) == 0 {
		t.Fatalf("optimize %s: no optima", strings.Join(args, " "))
	}
	return path, optima
}

// TestDesignNamesRoundTrip: every design name optimize prints — the
// paper's designs, GPU pairs at every tensor parallelism of --gpus, power-
// capped designs of --power-caps with and without --gpus — is accepted, by
// its display name and by its ASCII alias, by simulate --design, sweep
// --cluster, plot heatmap --design and optimize --designs; every optima
// CSV optimize writes, for every goal, is accepted by evaluate --from and
// plot summary/pareto --optima. Under -short a fifth of the names are fed
// back (every CSV still is).
func TestDesignNamesRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds of fits and searches: the full suite runs it")
	}
	dir := t.TempDir()
	spaces := []struct {
		name string
		args []string
	}{
		{"paper", []string{"--goal", "cost"}},
		{"gpus", []string{"--goal", "cost", "--gpus", "h100,h200,a100"}},
		{"gpus-caps", []string{"--goal", "cost", "--gpus", "h100", "--power-caps", "0.7,1"}},
		{"caps", []string{"--goal", "cost", "--power-caps", "0.6,0.725,1"}},
		{"power", []string{"--goal", "power", "--gpus", "h200"}},
		{"energy", []string{"--goal", "energy", "--gpus", "h100"}},
		{"tco", []string{"--goal", "tco", "--power-caps", "0.7,1"}},
		{"throughput", []string{"--goal", "throughput", "--power-budget", "40", "--gpus", "h100"}},
		{"batch", []string{"--goal", "batch", "--cost-budget", "100", "--gpus", "h200"}},
	}
	names := map[string]bool{}
	var order []string
	for _, sp := range spaces {
		args := append(sp.args, "--model", roundTripModel, "--duration", "10s")
		if sp.args[1] != "throughput" && sp.args[1] != "batch" {
			args = append(args, "--rps", "0.5")
		}
		path, optima := optimaOf(t, dir, sp.name, args...)
		for _, o := range optima {
			for _, n := range []string{o.Design, costpower.DesignAlias(o.Design)} {
				if !names[n] {
					names[n] = true
					order = append(order, n)
				}
			}
		}
		t.Run("csv/"+sp.name, func(t *testing.T) {
			code, _, errs := runCLI(t, append(append([]string{"evaluate", "--from", path}, roundTripLoad...), noCheck...)...)
			if code != 0 {
				t.Errorf("evaluate --from %s: exit %d: %s", sp.name, code, errs)
			}
			out := filepath.Join(t.TempDir(), "pareto.svg")
			if code, _, errs := runCLI(t, "plot", "pareto", "--optima", path, "--out", out); code != 0 {
				t.Errorf("plot pareto --optima %s: exit %d: %s", sp.name, code, errs)
			}
			base := ""
			for _, o := range optima {
				if o.Baseline && o.Feasible && base == "" {
					base = o.Design
				}
			}
			if base == "" {
				return
			}
			out = filepath.Join(t.TempDir(), "summary.svg")
			if code, _, errs := runCLI(t, "plot", "summary", "--optima", path, "--baseline", costpower.DesignAlias(base), "--out", out); code != 0 {
				t.Errorf("plot summary --optima %s --baseline %s: exit %d: %s", sp.name, base, code, errs)
			}
		})
	}
	if len(order) < 150 {
		t.Fatalf("only %d names: the spaces should print well over 150", len(order))
	}
	for i, n := range order {
		// Under -short every fifth name (display and alias alternate, and
		// each space's names are several in a row): all of them in the
		// full suite.
		if testing.Short() && i%5 != 0 {
			continue
		}
		t.Run("name/"+n, func(t *testing.T) {
			baseline := strings.HasPrefix(strings.ToLower(n), "baseline")
			counts, suffix := []string{"--prompt", "1", "--token", "1"}, ":1:1"
			if baseline {
				counts, suffix = []string{"--machines", "1"}, ":1"
			}
			runs := [][]string{
				append(append([]string{"simulate", "--design", n}, counts...), roundTripLoad...),
				append(append([]string{"sweep", "--cluster", n + suffix}, roundTripLoad...), noCheck...),
				append([]string{"plot", "heatmap", "--design", n, "--out", filepath.Join(t.TempDir(), "h.svg")}, roundTripLoad...),
			}
			for _, args := range runs {
				if code, _, errs := runCLI(t, args...); code != 0 {
					t.Errorf("%s: exit %d: %s", strings.Join(args, " "), code, errs)
				}
			}
		})
	}
}

// TestDesignNamesRejected: a name of the generated shapes that names no
// design is refused with exit 2 and says why.
func TestDesignNamesRejected(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"Baseline-H100-tp3", "tensor parallelism 3 must divide its 8 GPUs"},
		{"Splitwise-Z100-tp1-H100-tp1", `unknown GPU "Z100"`},
		{"Splitwise-HH@50", "takes a prompt cap and a token cap"},
		{"Baseline-H100@70-50", "is a baseline: it takes one cap"},
		{"Splitwise-HH@0-50", "expected a percent of board power in (0, 100]"},
		{"Baseline-H100@120", "expected a percent of board power in (0, 100]"},
		{"Splitwise-XY@70-70", `unknown design "Splitwise-XY@70-70"`},
	} {
		code, out, errs := runCLI(t, append([]string{"simulate", "--design", c.name, "--machines", "1"}, roundTripLoad...)...)
		wantBadInput(t, code, out, errs, c.want)
	}
}

// TestDesignAliasFileNames: the figures optimize --plot writes for
// generated designs (named by --designs, as optimize --gpus prints them)
// are named in ASCII.
func TestDesignAliasFileNames(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, append([]string{"optimize", "--goal", "cost", "--designs", "Splitwise H200·tp4 / H100·tp8,Baseline-H100-tp4", "--plot", dir}, roundTripLoad...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no figures written (%v): %s", err, out)
	}
	heatmap := false
	for _, f := range files {
		b := filepath.Base(f)
		heatmap = heatmap || strings.HasPrefix(b, "heatmap-Splitwise-H200-tp4-H100-tp8.")
		for _, r := range b {
			if r > 127 || r == ' ' {
				t.Errorf("file name %q is not plain ASCII", b)
				break
			}
		}
	}
	if !heatmap {
		t.Errorf("no heatmap among %s", fmt.Sprint(files))
	}
}
