package main

import (
	"os"
	"strings"
	"testing"
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
		"testdata/cli/readme_first_run.stdout": "$ go run . optimize --goal cost --rps 70\n",
		"testdata/cli/readme_iso_power.stdout": "$ go run . optimize --goal throughput --power-budget 455 --workload conversation\n",
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
		if got := maskGolden(block); got != maskGolden(string(want)) {
			t.Errorf("README.md's output of %q differs from %s: regenerate the goldens and paste it\n got:\n%s\nwant:\n%s", strings.TrimSpace(cmd), golden, got, want)
		}
	}
}
