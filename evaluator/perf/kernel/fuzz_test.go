package kernel

import (
	"io"
	"math"
	"strings"
	"testing"

	"splitplan/internal/fuzzing"
)

// fuzzName is the file name the fuzz targets read under: not .gz, so the
// fuzzer's bytes are the CSV itself.
const fuzzName = "fuzz.csv"

// checkFuzzErr fails t when err does not name the file.
func checkFuzzErr(t *testing.T, err error) {
	t.Helper()
	if !strings.HasPrefix(err.Error(), fuzzName) {
		t.Fatalf("error does not name the file: %v", err)
	}
}

// fuzzRows is fuzzing.Rows for a reader of rows from an io.Reader named
// fuzzName: its rows, at least one, each checked by check.
func fuzzRows[T any](f *testing.F, read func(r io.Reader, name string) ([]T, error), check func(t *testing.T, rows []T, i int)) {
	fuzzing.Rows(f, func(_ *testing.T, in string) ([]T, error) { return read(strings.NewReader(in), fuzzName) }, checkFuzzErr, false, check)
}

func finiteNonNeg(v float64) bool { return v >= 0 && !math.IsInf(v, 0) }

// FuzzReadCSV: ReadCSV never panics, its errors name the file, and every
// row it accepts is a known kind with the counts its kind needs, a
// positive finite time (idle rows aside) and finite non-negative figures.
func FuzzReadCSV(f *testing.F) {
	fuzzing.Seed(f, fuzzing.Heads(12, "../../../../shared/data/gpu-kernels/*/*.csv", "../../../data/gpu-runs/*/*/*.csv", "../../../data/gpu-runs/*/*.csv")...)
	head := strings.Join(columns, ",") + ",avg_power_w,avg_sm_mhz\n"
	fuzzing.Seed(f,
		head+"llama3.1-8b,1,32,prefill,1,64,,,,,,6.7856,263.9,1980\n",
		head+"gemm,,,gemm,,,,,4096,4096,4096,0.5,,\n",
		head+",,,idle,,,,,,,,,80,345\n",
		head+"llama3.1-8b,1,32,decode,,,8,1024,,,,NaN,,\n",
		head+"llama3.1-8b,1,32,decode,,,8,1024,,,,-1,,\n",
		head+"llama3.1-8b,1,1e10,decode,,,8,1024,,,,1,,\n",
		head+"llama3.1-8b,1,32,mixed,1,2.5,8,1024,,,,1,,\n",
		head+"x,1,1,copy,,,,,0,,,1,,\n",
		head+"x,1,1\n",
		head,
		"model,tp\n",
		"",
	)
	fuzzRows(f, ReadCSV, func(t *testing.T, rows []Row, i int) {
		r := rows[i]
		if r.Line < 2 || (i > 0 && r.Line <= rows[i-1].Line) {
			t.Fatalf("row %d: line %d out of order", i, r.Line)
		}
		for _, v := range []float64{r.M, r.N, r.K, r.TimeS, r.PowerW, r.SMMHz} {
			if !finiteNonNeg(v) {
				t.Fatalf("row %d: a figure not finite and non-negative: %+v", i, r)
			}
		}
		if r.TP < 0 || r.Layers < 0 || r.Prompts < 0 || r.TokensPerPrompt < 0 || r.Batch < 0 || r.ContextPerRequest < 0 {
			t.Fatalf("row %d: a negative count: %+v", i, r)
		}
		switch r.Kind {
		case Idle:
			return
		case Prefill, Decode, Mixed:
			if r.TP < 1 {
				t.Fatalf("row %d: iteration with tp < 1: %+v", i, r)
			}
		case GEMM:
			if r.M < 1 || r.N < 1 || r.K < 1 {
				t.Fatalf("row %d: gemm without its shape: %+v", i, r)
			}
		case Copy:
			if r.M < 1 {
				t.Fatalf("row %d: copy of no bytes: %+v", i, r)
			}
		default:
			t.Fatalf("row %d: unknown kind accepted: %+v", i, r)
		}
		if ms := r.TimeS * 1e3; ms < MinTimeMs*(1-1e-12) || ms > MaxTimeMs*(1+1e-12) {
			t.Fatalf("row %d: time %g ms beyond a measured time's bounds: %+v", i, ms, r)
		}
		if r.PowerW > 1e4 || r.SMMHz > 1e4 {
			t.Fatalf("row %d: power or clock beyond any GPU: %+v", i, r)
		}
	})
}

// FuzzReadMoECSV: ReadMoECSV never panics, its errors name the file, and
// every row it accepts has positive counts, topk ≤ experts, an
// intermediate size that divides over its TP, a known weight precision
// and a positive finite time.
func FuzzReadMoECSV(f *testing.F) {
	fuzzing.Seed(f, fuzzing.Heads(12, "../../../data/moe-kernels/*.csv.gz")...)
	head := strings.Join(moeColumns, ",") + "\n"
	fuzzing.Seed(f,
		head+"vllm,vllm_fp8moe_triton_tritonexperts,fp8_block,1,4096,2048,6,256,1,0.08248\n",
		head+"vllm,x,fp8_block,1,4096,2048,300,256,1,0.08248\n",
		head+"vllm,x,fp8_block,1,4096,2047,6,256,2,0.08248\n",
		head+"vllm,x,fp8_block,1,4096,2048,6,256,1,NaN\n",
		head+"vllm,x,fp8_block,1,4096,2048,6,256,1,Inf\n",
		head+"vllm,x,int3,1,4096,2048,6,256,1,1\n",
		head+"vllm,x,fp8_block,0,4096,2048,6,256,1,1\n",
		head+"vllm,x\n",
		head,
		"",
	)
	fuzzRows(f, ReadMoECSV, func(t *testing.T, rows []MoERow, i int) {
		if r := rows[i]; r.Tokens < 1 || r.Hidden < 1 || r.Inter < 1 || r.TopK < 1 || r.Experts < 1 || r.TP < 1 ||
			r.TopK > r.Experts || r.Inter%r.TP != 0 || !(r.TimeS > 0) || math.IsInf(r.TimeS, 0) || !r.Weights.Valid() {
			t.Fatalf("row %d violates the invariants: %+v", i, r)
		}
	})
}

// FuzzReadGDNCSV: ReadGDNCSV never panics, its errors name the file, and
// every layer it returns has positive counts, both of its kernels and a
// positive finite time.
func FuzzReadGDNCSV(f *testing.F) {
	fuzzing.Seed(f, fuzzing.Heads(12, "../../../data/gdn-kernels/*.csv.gz")...)
	head := strings.Join(gdnColumns, ",") + "\n"
	pair := "generation,causal_conv1d_update,1,1,1,16,128,16,128,m,0.0017\n" +
		"generation,fused_recurrent,1,1,1,16,128,16,128,m,0.0044\n"
	fuzzing.Seed(f,
		head+pair,
		head+pair+"context,causal_conv1d_fn,1,1,1,16,128,16,128,m,0.002\n",
		head+pair+pair,
		head+"context,a,1,1,1,16,128,16,128,m,0.002\n",
		head+"decode,a,1,1,1,16,128,16,128,m,0.002\n",
		head+"generation,a,1,1,1,16,128,16,128,m,1e308\ngeneration,b,1,1,1,16,128,16,128,m,1e308\n",
		head+"generation,a,1,1,1,16,128,16,128,m,-1\n",
		head+"generation,a,1\n",
		head,
		"",
	)
	fuzzRows(f, ReadGDNCSV, func(t *testing.T, rows []GDNRow, i int) {
		if r := rows[i]; r.Batch < 1 || r.Tokens < 1 || r.KHeads < 1 || r.KDim < 1 || r.VHeads < 1 || r.VDim < 1 ||
			r.kernels != 2 || !(r.TimeS > 0) || math.IsInf(r.TimeS, 0) {
			t.Fatalf("row %d violates the invariants: %+v", i, r)
		}
	})
}
