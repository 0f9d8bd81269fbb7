package cli

import (
	"fmt"
	"os"
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
		"testdata/cli/optimize_confidence.stdout":   "$ go run . optimize --goal cost --rps 70 --confidence 0.9\n",
		"testdata/cli/readme_iso_power.stdout":      "$ go run . optimize --goal throughput --power-budget 455 --workload conversation\n",
		"testdata/cli/readme_gpu_pairs.stdout":      "$ go run . optimize --goal cost --rps 70 --model llama3.1-70b --gpus h100,h200,b200 --pairs pairs.csv --plot plots\n",
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
