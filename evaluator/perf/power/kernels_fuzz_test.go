package power

import (
	"math"
	"strings"
	"testing"

	"splitplan/internal/fuzzing"
)

// FuzzReadKernels: ReadKernels never panics, its errors name the table,
// and every row it returns is an idle or iteration row with a positive
// finite board power and time (an iteration's model at a TP ≥ 1).
func FuzzReadKernels(f *testing.F) {
	fuzzing.Seed(f, fuzzing.Heads(12, "../../../../shared/data/gpu-kernels/*/*.csv")...)
	head := "model,tp,layers,kind,prompts,tokens_per_prompt,batch,context_per_request,m,n,k,time_ms,avg_power_w,avg_sm_mhz\n"
	fuzzing.Seed(f,
		head+"llama3.1-8b,1,32,prefill,1,64,,,,,,6.7856,263.9,1980\n,,,idle,,,,,,,,,80,345\n",
		head+"llama3.1-8b,1,32,decode,,,8,1024,,,,1.5,,\n",
		head+"gemm,,,gemm,,,,,4096,4096,4096,0.5,,\n",
		head+",,,idle,,,,,,,,,0,345\n",
		head+",,,idle,,,,,,,,,NaN,345\n",
		head,
		"",
	)
	f.Fuzz(func(t *testing.T, in string) {
		rows, err := ReadKernels(strings.NewReader(in))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "kernel table") {
				t.Fatalf("error does not name the table: %v", err)
			}
			return
		}
		for i, r := range rows {
			if !(r.AvgPowerW > 0) || math.IsInf(r.AvgPowerW, 0) || !(r.AvgSMMHz >= 0) || math.IsInf(r.AvgSMMHz, 0) {
				t.Fatalf("row %d: power or clock not finite and positive: %+v", i, r)
			}
			switch r.Kind {
			case "idle":
			case "prefill", "decode", "mixed":
				if r.TP < 1 || !(r.TimeS > 0) || math.IsInf(r.TimeS, 0) {
					t.Fatalf("row %d: iteration without its TP or time: %+v", i, r)
				}
			default:
				t.Fatalf("row %d: kind %q returned", i, r.Kind)
			}
		}
	})
}
