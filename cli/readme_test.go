package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"splitplan/evaluator/perf/measured"
)

// TestREADMEOutputs: the outputs the README shows are the tool's, as the
// golden tests record them (timings masked), so the README cannot drift.
func TestREADMEOutputs(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	for golden, cmd := range map[string]string{
		"testdata/cli/readme_first_run.stdout":      "$ go run . optimize --goal cost --rps 70\n",
		"testdata/cli/optimize_confidence.stdout":   "$ go run . optimize --goal cost --rps 70 --confidence 0.9    # slow: 40 s, every scenario checked over 15 minutes\n",
		"testdata/cli/readme_iso_power.stdout":      "$ go run . optimize --goal throughput --power-budget 455 --workload conversation\n",
		"testdata/cli/readme_gpu_pairs.stdout":      "$ go run . optimize --goal cost --rps 70 --model llama3.1-70b --gpus h100,h200,b200 --pairs pairs.csv --plot figures\n",
		"testdata/cli/optimize_schedule.stdout":     "$ go run . optimize --goal cost --rate-profile diurnal:peak=100,trough=30,period=1h,phase=30m --schedule 15m --scale-delay 3m --autoscale --designs HH,Baseline-H100 --schedule-out schedule.csv\n",
		"testdata/cli/optimize_itl_policies.stdout": "$ go run . optimize --goal throughput --model llama3.1-8b --slo-set itl_p99 --slo-abs itl_p99=0.1 --cost-budget 17.6 --trace examples/sharegpt-like.csv --designs Baseline-A100-tp1+request-level,Baseline-A100-tp1+prefill-first,Baseline-A100-tp1,Baseline-A100-tp1+sarathi\n",
	} {
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		i := strings.Index(readme, "```\n"+cmd)
		if i < 0 {
			t.Errorf("README.md shows no output of %q", strings.TrimSpace(cmd))
			continue
		}
		block := readme[i+len("```\n"+cmd):]
		block = block[:strings.Index(block, "```")]
		// A block that starts with "[...]" shows an excerpt: its lines
		// must appear, in a row, in the golden output.
		if rest, ok := strings.CutPrefix(block, "[...]\n"); ok {
			w := maskGolden(strings.ReplaceAll(string(want), "$TMP/", ""))
			if got := maskGolden(strings.TrimSuffix(rest, "[...]\n")); !strings.Contains(w, got) {
				t.Errorf("README.md's excerpt of the output of %q is not in %s: regenerate the goldens and paste it\n got:\n%s", strings.TrimSpace(cmd), golden, got)
			}
			continue
		}
		if got := maskGolden(block); got != maskGolden(string(want)) {
			t.Errorf("README.md's output of %q differs from %s: regenerate the goldens and paste it\n got:\n%s\nwant:\n%s", strings.TrimSpace(cmd), golden, got, want)
		}
	}
}

// TestREADMESpecOnlyFigure: the held-out error the README quotes for a
// spec-only GPU's provenance is the one the embedded calibration prints
// (vLLM's shared entry, the engine --gpus uses by default).
func TestREADMESpecOnlyFigure(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	ttft, tpot, ok := measured.Default().HeldOut(measured.VLLM)
	if !ok {
		t.Fatal("the embedded calibration has no held-out figure for vLLM")
	}
	want := fmt.Sprintf("held-out MAPE %.0f%% TTFT, %.0f%% TPOT, ...)`", ttft, tpot)
	if !strings.Contains(strings.ReplaceAll(string(data), "\n", " "), want) {
		t.Errorf("README.md does not quote the spec-only provenance as the calibration prints it: want %q", want)
	}
}

// TestREADMEHHCap: the README's table of the HHcap question (the token
// pool capped, the prompt pool not) and the figures its prose quotes are
// the output of the command it names, as the readme_hhcap_energy golden
// records it: a recalibration that moves them fails here rather than
// leaving the README stale.
func TestREADMEHHCap(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	out, err := os.ReadFile(filepath.Join(goldenDir, "readme_hhcap_energy.stdout"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(readme, "`go run .\noptimize --goal energy --rps 70 --designs HH --power-caps 0.5:1.0:0.1`") {
		t.Fatal("README.md no longer names the HHcap command this test checks")
	}
	// The golden's rows by design: prompt, token, $/h, kW, kWh/day, J/token.
	rows := map[string][]string{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 8 && strings.HasPrefix(f[0], "Splitwise-HH") {
			if _, seen := rows[f[0]]; !seen {
				rows[f[0]] = f[1:7]
			}
		}
	}
	start := strings.Index(readme, "| token cap | prompt + token | provisioned kW | GPU kWh/day | J/token |")
	if start < 0 {
		t.Fatal("README.md has no HHcap table")
	}
	table := readme[start:]
	table = table[:strings.Index(table, "\n\n")]
	n := 0
	for _, line := range strings.Split(table, "\n")[2:] {
		c := strings.Split(strings.Trim(line, "| "), " | ")
		if len(c) != 5 {
			t.Fatalf("HHcap table row %q: want 5 cells", line)
		}
		cap, err := strconv.ParseFloat(c[0], 64)
		if err != nil {
			t.Fatalf("HHcap table row %q: %v", line, err)
		}
		design := "Splitwise-HH"
		if cap < 1 {
			design = fmt.Sprintf("Splitwise-HH@100-%.0f", 100*cap)
		}
		g, ok := rows[design]
		if !ok {
			t.Fatalf("HHcap table row %q: no %s in the golden", line, design)
		}
		if want := fmt.Sprintf("%s + %s | %s | %s | %s", g[0], g[1], g[3], g[4], g[5]); strings.Join(c[1:], " | ") != want {
			t.Errorf("README.md's HHcap row for a token cap of %s reads %q, the command prints %q", c[0], strings.Join(c[1:], " | "), want)
		}
		n++
	}
	if n != 6 {
		t.Errorf("%d rows in README.md's HHcap table, want the six token caps", n)
	}
	// The prose: the least energy of all the caps, and the prompt pool
	// alone at 50%.
	least := ""
	for d, g := range rows {
		if least == "" || atof(t, g[4]) < atof(t, rows[least][4]) {
			least = d
		}
	}
	flat := strings.Join(strings.Fields(readme), " ")
	g := rows[least]
	base := rows["Splitwise-HH"]
	saving := fmt.Sprintf("%s kWh/day, −%.0f%%**", g[4], 100*(1-atof(t, g[4])/atof(t, base[4])))
	for _, want := range []string{"**" + saving, fmt.Sprintf("($%.0f/h against $%.0f/h)", atof(t, g[2]), atof(t, base[2])), "(" + g[3] + " kW)",
		fmt.Sprintf("(%s prompt and %s token machines)", g[0], g[1]), rows["Splitwise-HH@50-100"][4] + " kWh/day"} {
		if !strings.Contains(flat, want) {
			t.Errorf("README.md's HHcap prose does not quote %q (the least energy is %s's: %v)", want, least, g)
		}
	}
}
