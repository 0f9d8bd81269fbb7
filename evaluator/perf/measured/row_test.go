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

// sharedRowsByID is sharedRows by row id.
func sharedRowsByID(t testing.TB) map[string]Row {
	t.Helper()
	byID := map[string]Row{}
	for _, r := range sharedRows(t) {
		byID[r.ID] = r
	}
	return byID
}

func TestReadShared(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
	cases := []struct{ in, want string }{
		{"", "empty file"},
		{"id,backend\n", "missing column"},
		{header + goodAgg + strings.Replace(goodAgg, "vllm", "tgi", 1), "x.csv:3:"},
		{header + strings.Replace(goodAgg, ",1024,128,", ",1024,-5,", 1), "field osl"},
		{header + strings.Replace(goodAgg, ",1024,128,", ",0,128,", 1), `field isl: expected a positive integer, got "0"`},
		{header + strings.Replace(goodAgg, "120.5", "fast", 1), "field silicon_ttft_ms: expected a positive number"},
		{header + strings.Replace(goodAgg, "120.5", "1e-300", 1), `field silicon_ttft_ms: expected a positive number of milliseconds, at least 0.001 (a microsecond: no token comes sooner), got "1e-300"`},
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
			if r.InputTokens <= 0 || r.OutputTokens <= 0 || !(r.TTFTms >= 1e-3) || !(r.TPOTms >= 1e-3) {
				t.Fatalf("accepted an invalid row %+v", r)
			}
		}
	})
}

// TestReadAttentionDPFromMoETP: a layout with moe_tp_size above tp_size
// is attention data parallelism over moe_tp_size GPUs (TensorRT-LLM's
// tp8_ep8 with attention DP written tp 1, attention DP 64, moe tp 8, moe
// ep 8): 8 ranks of 8 clients each at concurrency 64, experts 8-way EP,
// predictable on one 8-GPU node. Layouts already consistent are kept.
func TestReadAttentionDPFromMoETP(t *testing.T) {
	t.Parallel()
	dp := "x_tp8_ep8,src; silicon_concurrency=64,trtllm,,deepseek-ai/DeepSeek-R1,b200_sxm,fp4,agg,1024,1024,nvfp4,nvfp4,1,1,1,64,8,8,,,,,,,,,,,,,,,900,20\n"
	gptoss := "y_tp4_ep1,src; silicon_concurrency=32,trtllm,,openai/gpt-oss-120b,b200_sxm,fp4,agg,1024,1024,,,8,1,1,4,4,1,,,,,,,,,,,,,,,200,5\n"
	dis := "z,src; silicon_concurrency=64,trtllm,,deepseek-ai/DeepSeek-R1,b200_sxm,fp4,disagg,8192,1024,nvfp4,nvfp4,,,,,,,1,1,1,1,16,8,4,16,2,1,1,16,8,2,400,12\n"
	rows, err := Read(strings.NewReader(header+dp+gptoss+dis), "x.csv")
	if err != nil {
		t.Fatal(err)
	}
	a := rows[0]
	if want := (Parallel{TP: 1, PP: 1, AttentionDP: 8, MoETP: 1, MoEEP: 8}); a.Agg != want || a.Concurrency != 64 || a.RankClients() != 8 {
		t.Errorf("tp8_ep8 row read as %+v, concurrency %d, %d clients a rank; want %+v, 64, 8", a.Agg, a.Concurrency, a.RankClients(), want)
	}
	if p, err := Predict(a, Default()); err != nil || !(p.TTFTms > 0) {
		t.Errorf("tp8_ep8 row: %v, %v; want it predicted on one node", p, err)
	}
	if g := rows[1]; g.Agg != (Parallel{TP: 1, PP: 1, AttentionDP: 4, MoETP: 4, MoEEP: 1}) || g.RankClients() != 8 {
		t.Errorf("consistent tp4_ep1 row changed: %+v, %d clients a rank", g.Agg, g.RankClients())
	}
	d := rows[2]
	if d.Prefill.Parallel != (Parallel{TP: 1, PP: 1, AttentionDP: 8, MoETP: 2, MoEEP: 4}) || d.Decode.Parallel != (Parallel{TP: 1, PP: 1, AttentionDP: 8, MoETP: 4, MoEEP: 2}) {
		t.Errorf("disagg layouts read as %+v / %+v", d.Prefill.Parallel, d.Decode.Parallel)
	}
	// On the shipped benchmarks: every such row is read so, and the
	// attention-DP rows refused before as spanning 16 or 64 GPUs are
	// predicted.
	shared := sharedRows(t)
	n, predicted := 0, 0
	for _, r := range shared {
		if r.Mode != Agg || r.Agg.MoEEP <= 1 || r.Agg.AttentionDP <= 1 || r.Agg.TP > 1 {
			continue
		}
		n++
		if r.Agg.AttentionDP*max(r.Agg.TP, 1) != r.Agg.MoETP*r.Agg.MoEEP {
			t.Errorf("%s (line %d): layout %+v spans different GPUs for attention and experts", r.ID, r.Line, r.Agg)
		}
		if _, err := Predict(r, Default()); err == nil {
			predicted++
		} else if strings.Contains(err.Error(), "spans") {
			t.Errorf("%s: %v", r.ID, err)
		}
	}
	if n < 38 || predicted < 38 {
		t.Errorf("%d attention-DP rows with expert parallelism, %d predicted; want at least the 38 tp8_ep8, tp4_ep4 and tp2_ep2 runs", n, predicted)
	}
}

// TestReadProductTP: a tpN_epN run without attention DP written tp_size
// N², moe tp N × ep N is read as N GPUs (attention tp N, experts ep N,
// moe tp 1) where its id names it or where N² GPUs exceed one HGX node;
// vLLM's tp4_ep4 written tp 4, attention DP 4, ep 16 (batch_size the
// concurrency / 4) is read as 4 GPUs, ep 4, every client on the one
// rank. AIConfigurator's consistent tp 4, moe tp 2 × ep 2 (id
// ..._tp4_epnone_) is kept as written. On the shipped benchmarks no agg row with expert
// parallelism is left spanning 64 GPUs, and the tp8_ep8 runs are
// predicted.
func TestReadProductTP(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		id       string
		in, want Parallel
	}{
		{"dsr1_b200_trtllm_fp8_agg_1024x1024_c8_cfg177", Parallel{TP: 64, PP: 1, AttentionDP: 1, MoETP: 8, MoEEP: 8}, Parallel{TP: 8, PP: 1, AttentionDP: 1, MoETP: 1, MoEEP: 8}},
		{"x_agg_1024x1024_c8_tp4_ep4_935", Parallel{TP: 16, PP: 1, AttentionDP: 1, MoETP: 4, MoEEP: 4}, Parallel{TP: 4, PP: 1, AttentionDP: 1, MoETP: 1, MoEEP: 4}},
		{"x_fp4_agg_8192x1024_c16_tp2_ep2_927", Parallel{TP: 4, PP: 1, AttentionDP: 1, MoETP: 2, MoEEP: 2}, Parallel{TP: 2, PP: 1, AttentionDP: 1, MoETP: 1, MoEEP: 2}},
		{"q_h100_sxm_trtllm_agg_128x128_c16_tp4_epnone_16", Parallel{TP: 4, PP: 1, MoETP: 2, MoEEP: 2}, Parallel{TP: 4, PP: 1, MoETP: 2, MoEEP: 2}},
		{"qwen3_5_b300_sglang_fp4_agg_8192x1024_c32_cfg736", Parallel{TP: 4, PP: 1, AttentionDP: 1, MoETP: 2, MoEEP: 2}, Parallel{TP: 4, PP: 1, AttentionDP: 1, MoETP: 2, MoEEP: 2}},
		{"y_tp8_ep8", Parallel{TP: 8, PP: 1, AttentionDP: 1, MoETP: 1, MoEEP: 8}, Parallel{TP: 8, PP: 1, AttentionDP: 1, MoETP: 1, MoEEP: 8}},
		{"z_tp8_ep8", Parallel{TP: 64, PP: 1, AttentionDP: 2, MoETP: 8, MoEEP: 8}, Parallel{TP: 64, PP: 1, AttentionDP: 2, MoETP: 8, MoEEP: 8}},
		{"k_vllm_fp4_agg_8192x1024_c64_tp4_ep4_1290", Parallel{TP: 4, PP: 1, AttentionDP: 4, MoETP: 1, MoEEP: 16}, Parallel{TP: 4, PP: 1, AttentionDP: 1, MoETP: 1, MoEEP: 4}},
		{"minimaxm2_5_b300_vllm_fp8_agg_1024x1024_c512_cfg734", Parallel{TP: 4, PP: 1, AttentionDP: 4, MoETP: 1, MoEEP: 16}, Parallel{TP: 4, PP: 1, AttentionDP: 1, MoETP: 1, MoEEP: 4}},
		{"m_vllm_fp8_agg_1024x1024_c64_tp2_ep2_7", Parallel{TP: 2, PP: 1, AttentionDP: 2, MoETP: 1, MoEEP: 4}, Parallel{TP: 2, PP: 1, AttentionDP: 1, MoETP: 1, MoEEP: 2}},
		{"minimaxm2_5_b200_vllm_fp8_agg_1024x1024_c512_cfg691", Parallel{TP: 2, PP: 1, AttentionDP: 2, MoETP: 1, MoEEP: 4}, Parallel{TP: 2, PP: 1, AttentionDP: 2, MoETP: 1, MoEEP: 4}},
	} {
		if got, _ := c.in.productTP(c.id, 8); got != c.want {
			t.Errorf("%s: %+v read as %+v, want %+v", c.id, c.in, got, c.want)
		}
	}
	// On a rack whose NVLink domain spans nodes (GB200), a 16-GPU layout
	// no id names is what it says.
	gb := Parallel{TP: 4, PP: 1, AttentionDP: 4, MoETP: 1, MoEEP: 16}
	if got, _ := gb.productTP("x_cfg1", 0); got != gb {
		t.Errorf("GB200 tp 4 × dp 4, ep 16 read as %+v", got)
	}
	// A run recorded twice names its layout in either id: the copy whose
	// id does not (db-dump's ..._cfg690) is read as the one whose id does.
	// One MiniMax-M2.5 run at tp 2 × attention DP 2, ep 4 as written, its
	// id and both means (ms) given.
	minimax := func(id, means string) string {
		return id + ",src; silicon_concurrency=64,vllm,,MiniMaxAI/MiniMax-M2.5,b200_sxm,fp8,agg,1024,1024,fp8,fp8,32,2,1,2,1,4,,,,,,,,,,,,,,," + means + "\n"
	}
	const means = "191.87270224570057,22.403608332198445"
	cfg := minimax("m_vllm_fp8_agg_1024x1024_c64_cfg690", means)
	named := minimax("n_vllm_fp8_agg_1024x1024_c64_tp2_ep2_1375", means)
	other := minimax("o_vllm_fp8_agg_1024x1024_c64_cfg690", "200,20")
	twins, err := Read(strings.NewReader(header+cfg+named+other), "x.csv")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []Parallel{{TP: 2, PP: 1, AttentionDP: 1, MoETP: 1, MoEEP: 2}, {TP: 2, PP: 1, AttentionDP: 1, MoETP: 1, MoEEP: 2}, {TP: 2, PP: 1, AttentionDP: 2, MoETP: 1, MoEEP: 4}} {
		r := twins[i]
		clients := 64
		if want.AttentionDP == 2 {
			clients = 32
		}
		if r.Agg != want || r.RankClients() != clients {
			t.Errorf("%s: read as %+v, %d clients a rank; want %+v, %d", r.ID, r.Agg, r.RankClients(), want, clients)
		}
	}
	n := 0
	for _, r := range sharedRows(t) {
		if r.Mode != Agg || r.Agg.MoEEP <= 1 {
			continue
		}
		if r.Agg.TP*max(r.Agg.AttentionDP, 1) == 64 {
			t.Errorf("%s (line %d): layout %+v still spans 64 GPUs", r.ID, r.Line, r.Agg)
		}
		if r.Engine == VLLM && strings.Contains(r.ID, "_tp4_ep4") {
			if r.Agg != (Parallel{TP: 4, PP: 1, AttentionDP: 1, MoETP: 1, MoEEP: 4}) || r.RankClients() != r.Concurrency {
				t.Errorf("%s: vLLM tp4_ep4 read as %+v, %d clients a rank of %d", r.ID, r.Agg, r.RankClients(), r.Concurrency)
			}
		}
		if strings.Contains(r.ID, "_tp8_ep8") && r.Agg.AttentionDP <= 1 {
			if r.Agg != (Parallel{TP: 8, PP: 1, AttentionDP: r.Agg.AttentionDP, MoETP: 1, MoEEP: 8}) {
				t.Errorf("%s: tp8_ep8 read as %+v", r.ID, r.Agg)
			}
			if _, err := Predict(r, Default()); err != nil && strings.Contains(err.Error(), "spans") {
				t.Errorf("%s: %v", r.ID, err)
			}
			n++
		}
	}
	if n < 50 {
		t.Errorf("%d tp8_ep8 agg rows without attention DP; want the snapshots' 50 or more", n)
	}
}
