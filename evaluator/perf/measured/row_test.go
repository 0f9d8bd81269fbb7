package measured

import (
	"os"
	"strings"
	"testing"
)

const sharedCSV = "../../../../shared/data/measured-serving/serving_benchmarks.csv"

// sharedRows reads the shipped benchmarks or skips the test when ../shared
// is absent.
func sharedRows(t testing.TB) []Row {
	t.Helper()
	if _, err := os.Stat(sharedCSV); err != nil {
		t.Skip("../shared not present")
	}
	rows, err := ReadFile(sharedCSV)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestReadShared(t *testing.T) {
	rows := sharedRows(t)
	if len(rows) != 4750 {
		t.Fatalf("got %d rows, want 4750", len(rows))
	}
	var disaggNoConc int
	for _, r := range rows {
		if r.Concurrency == 0 {
			disaggNoConc++
		}
	}
	if disaggNoConc > 30 {
		t.Errorf("%d rows without a concurrency", disaggNoConc)
	}
	if rows[0].Line != 2 || rows[0].Engine != VLLM || rows[0].Concurrency != 128 || rows[0].InputTokens != 8192 {
		t.Errorf("first row parsed as %+v", rows[0])
	}
}

const header = "id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,gemm_quant_mode,moe_quant_mode,batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size,prefill_batch_size,prefill_num_workers,prefill_tp_size,prefill_pp_size,prefill_attention_dp_size,prefill_moe_tp_size,prefill_moe_ep_size,decode_batch_size,decode_num_workers,decode_tp_size,decode_pp_size,decode_attention_dp_size,decode_moe_tp_size,decode_moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n"

const goodAgg = "a_c8,src,vllm,0.19.0,Qwen/Qwen3-32B,h100_sxm,fp8,agg,1024,128,fp8,,8,2,1,1,2,1,,,,,,,,,,,,,,,120.5,9.25\n"
const goodDisagg = "d_c64_x,src; silicon_concurrency=64,trtllm,,deepseek-ai/DeepSeek-R1,gb200,fp4,disagg,8192,1024,nvfp4,nvfp4,,,,,,,1,2,4,1,1,4,1,16,1,8,1,1,1,8,400,12\n"

func TestReadGood(t *testing.T) {
	rows, err := Read(strings.NewReader(header+goodAgg+goodDisagg), "x.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("got %d rows", len(rows))
	}
	a, d := rows[0], rows[1]
	if a.Line != 2 || a.Concurrency != 8 || a.Agg.TP != 2 || a.TTFTms != 120.5 || a.Mode != Agg || a.OutputTokens != 128 {
		t.Errorf("agg row %+v", a)
	}
	if d.Line != 3 || d.Concurrency != 64 || d.Mode != Disagg || d.Engine != TRTLLM || d.Prefill.Workers != 2 || d.Prefill.TP != 4 || d.Decode.BatchSize != 16 || d.Decode.TP != 8 || d.Decode.MoEEP != 8 {
		t.Errorf("disagg row %+v", d)
	}
}

func TestReadBad(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", "empty file"},
		{"id,backend\n", "missing column"},
		{header + goodAgg + strings.Replace(goodAgg, "vllm", "tgi", 1), "x.csv:3:"},
		{header + strings.Replace(goodAgg, ",1024,128,", ",1024,-5,", 1), "field osl"},
		{header + strings.Replace(goodAgg, "120.5", "fast", 1), "field silicon_ttft_ms: expected a positive number"},
		{header + strings.Replace(goodAgg, ",agg,", ",both,", 1), "field mode: expected agg or disagg"},
		{header + strings.Replace(goodAgg, "fp8,,8,2", "fp8,,,2", 1), "field batch_size"},
		{header + "a,b\n", "wrong number of fields"},
	}
	for _, c := range cases {
		_, err := Read(strings.NewReader(c.in), "x.csv")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Read(%q): error %v, want it to contain %q", c.in, err, c.want)
		}
	}
}

func FuzzRead(f *testing.F) {
	f.Add(header + goodAgg + goodDisagg)
	f.Add(header + "a,b\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, in string) {
		rows, err := Read(strings.NewReader(in), "fuzz.csv")
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.InputTokens <= 0 || r.OutputTokens <= 0 || !(r.TTFTms > 0) || !(r.TPOTms > 0) {
				t.Fatalf("accepted an invalid row %+v", r)
			}
		}
	})
}
