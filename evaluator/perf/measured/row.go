package measured

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"splitplan/hw"
	"splitplan/internal/enum"
	"strconv"
	"strings"
)

// Engine is the serving engine a benchmark ran on.
type Engine int

// The engines in the measured data.
const (
	// VLLM is vLLM (V1 engine: chunked prefill mixed with decodes).
	VLLM Engine = iota
	// SGLang is SGLang (prefill batches run apart from decode batches).
	SGLang
	// TRTLLM is TensorRT-LLM (in-flight batching, whole prompts mixed with
	// decodes).
	TRTLLM
)

var engineNames = [...]string{VLLM: "vllm", SGLang: "sglang", TRTLLM: "trtllm"}

// String returns the engine's name as the CSV spells it.
func (e Engine) String() string { return enum.Name(engineNames[:], e, "Engine") }

// ParseEngine parses vllm, sglang or trtllm (case-insensitive).
func ParseEngine(s string) (Engine, error) {
	if i, ok := enum.Index(engineNames[:], s); ok {
		return Engine(i), nil
	}
	return 0, fmt.Errorf("engine %q: expected one of vllm, sglang, trtllm", s)
}

// UnmarshalText parses text with ParseEngine (for TOML).
func (e *Engine) UnmarshalText(text []byte) error {
	v, err := ParseEngine(string(text))
	if err != nil {
		return err
	}
	*e = v
	return nil
}

// MarshalText returns the engine's name.
func (e Engine) MarshalText() ([]byte, error) {
	if e < 0 || int(e) >= len(engineNames) {
		return nil, fmt.Errorf("invalid engine %d", int(e))
	}
	return []byte(e.String()), nil
}

// Mode says whether prefill and decode share workers (Agg) or run on
// separate prefill and decode workers (Disagg).
type Mode int

// The serving modes.
const (
	// Agg is aggregated serving: every worker runs prefill and decode.
	Agg Mode = iota
	// Disagg is disaggregated serving: prefill workers hand the KV cache to
	// decode workers.
	Disagg
)

// String returns agg or disagg.
func (m Mode) String() string {
	if m == Disagg {
		return "disagg"
	}
	return "agg"
}

// Parallel is one worker's parallel layout as the CSV gives it. A zero
// field means the CSV left it empty (or wrote 0); the predictor reads
// zero as 1.
type Parallel struct {
	// TP is the attention tensor-parallel degree (tp_size).
	TP int
	// PP is the pipeline-parallel degree (pp_size).
	PP int
	// AttentionDP is the attention data-parallel degree
	// (attention_dp_size).
	AttentionDP int
	// MoETP is the tensor-parallel degree inside each expert (moe_tp_size).
	MoETP int
	// MoEEP is the expert-parallel degree (moe_ep_size).
	MoEEP int
}

// Worker is one kind of worker of a disaggregated deployment.
type Worker struct {
	Parallel
	// BatchSize is the per-worker batch size the run was configured for
	// (prefill_batch_size / decode_batch_size; 0 = not given).
	BatchSize int
	// Workers is the number of such workers (0 = not given; read as 1).
	Workers int
}

// Row is one measured benchmark run.
type Row struct {
	// Line is the row's line number in its file (1 = header).
	Line int
	// ID is the run's identifier (id column).
	ID string
	// Source is the silicon_data_source column (where and when it was
	// measured).
	Source string
	// Engine is the serving engine (backend).
	Engine Engine
	// EngineVersion is backend_version (may be empty).
	EngineVersion string
	// Model is the Hugging Face model path (model_path).
	Model string
	// GPU is the system name (system), e.g. h100_sxm or gb200.
	GPU string
	// Precision is the precision column as written (may be empty).
	Precision string
	// Mode is agg or disagg.
	Mode Mode
	// InputTokens is the prompt length of every request (isl).
	InputTokens int
	// OutputTokens is the number of generated tokens of every request
	// (osl).
	OutputTokens int
	// GEMMQuant and MoEQuant are the weight quantization of the dense GEMMs
	// and of the experts (gemm_quant_mode, moe_quant_mode; may be empty).
	GEMMQuant, MoEQuant string
	// Concurrency is the number of clients of the closed-loop benchmark,
	// for the whole system: the silicon_concurrency recorded in
	// silicon_data_source, else the _cN_ part of the id, else batch_size ×
	// attention_dp_size; 0 when none is given.
	Concurrency int
	// BatchSize is the batch_size column (agg rows; 0 when empty, and
	// when the layout's attention DP degree was re-read from moe_tp_size,
	// Parallel.attentionDP): the clients of one engine rank, not of the
	// system. With attention DP it
	// is concurrency / attention_dp_size (168 rows), and for runs through
	// a router over several replicas concurrency / replicas (29 rows);
	// otherwise it equals the concurrency.
	BatchSize int
	// Agg is the worker layout of an agg row.
	Agg Parallel
	// Prefill and Decode are the worker layouts of a disagg row.
	Prefill, Decode Worker
	// TTFTms and TPOTms are the measured mean time to first token and time
	// per output token in milliseconds.
	TTFTms, TPOTms float64
}

// columns is the header the reader requires (any order; extra columns are
// ignored).
var columns = []string{
	"id", "silicon_data_source", "backend", "backend_version", "model_path", "system",
	"precision", "mode", "isl", "osl", "gemm_quant_mode", "moe_quant_mode", "batch_size",
	"tp_size", "pp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size",
	"prefill_batch_size", "prefill_num_workers", "prefill_tp_size", "prefill_pp_size",
	"prefill_attention_dp_size", "prefill_moe_tp_size", "prefill_moe_ep_size",
	"decode_batch_size", "decode_num_workers", "decode_tp_size", "decode_pp_size",
	"decode_attention_dp_size", "decode_moe_tp_size", "decode_moe_ep_size",
	"silicon_ttft_ms", "silicon_tpot_ms",
}

var (
	concurrencyInSource = regexp.MustCompile(`silicon_concurrency=(\d+)`)
	concurrencyInID     = regexp.MustCompile(`_c(\d+)(_|$)`)
)

// ReadFile reads a serving-benchmarks CSV file (see Read).
func ReadFile(path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("measured: %w", err)
	}
	defer f.Close()
	return Read(f, path)
}

// Read parses a serving-benchmarks CSV (the columns of
// serving_benchmarks.csv, any order, extra columns ignored) into rows.
// name labels errors, which give the file, line and column, the field and
// what was expected.
func Read(r io.Reader, name string) ([]Row, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = false
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("measured: %s: empty file: expected a header line", name)
	}
	if err != nil {
		return nil, fmt.Errorf("measured: %s: %w", name, err)
	}
	idx := make(map[string]int, len(header))
	for i, h := range header {
		idx[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	col := make([]int, len(columns))
	for i, c := range columns {
		j, ok := idx[c]
		if !ok {
			return nil, fmt.Errorf("measured: %s:1: missing column %q (expected the columns of serving_benchmarks.csv)", name, c)
		}
		col[i] = j
	}
	var rows []Row
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("measured: %s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		p := rowParser{name: name, cr: cr, rec: rec, col: col}
		row := p.row(line)
		if p.err != nil {
			return nil, p.err
		}
		rows = append(rows, row)
	}
	// The ids of each measurement (GPU, engine and both means to 12
	// digits, the key sameRun counts one run by): a run recorded twice
	// names its layout in either id.
	keys := make([]runKey, len(rows))
	ids := map[runKey]string{}
	for i, r := range rows {
		keys[i] = exactKey(r)
		ids[keys[i]] += " " + r.ID
	}
	for i := range rows {
		rows[i].readLayout(ids[keys[i]])
	}
	return rows, nil
}

// rowParser parses the fields of one record, keeping the first error.
type rowParser struct {
	name string
	cr   *csv.Reader
	rec  []string
	col  []int
	err  error
}

func (p *rowParser) field(k int) (string, int) {
	return strings.TrimSpace(p.rec[p.col[k]]), p.col[k]
}

func (p *rowParser) fail(i int, format string, args ...any) {
	if p.err != nil {
		return
	}
	line, column := p.cr.FieldPos(i)
	p.err = fmt.Errorf("measured: %s:%d:%d: field %s: %s", p.name, line, column, columns[p.fieldIndex(i)], fmt.Sprintf(format, args...))
}

func (p *rowParser) fieldIndex(i int) int {
	for k, c := range p.col {
		if c == i {
			return k
		}
	}
	return 0
}

func (p *rowParser) str(k int) string {
	s, _ := p.field(k)
	return s
}

// intField parses a non-negative integer; empty means 0 unless required.
func (p *rowParser) intField(k int, required bool) int {
	s, i := p.field(k)
	if s == "" {
		if required {
			p.fail(i, "expected a positive integer, got an empty field")
		}
		return 0
	}
	v, err := strconv.Atoi(s)
	switch {
	case required && (err != nil || v < 1):
		p.fail(i, "expected a positive integer, got %q", s)
		return 0
	case err != nil || v < 0:
		p.fail(i, "expected a non-negative integer, got %q", s)
		return 0
	}
	return v
}

func (p *rowParser) msField(k int) float64 {
	s, i := p.field(k)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v >= 1e-3) || v > 1e12 {
		p.fail(i, "expected a positive number of milliseconds, at least 0.001 (a microsecond: no token comes sooner), got %q", s)
		return 0
	}
	return v
}

func (p *rowParser) parallel(base int) Parallel {
	return Parallel{
		TP:          p.intField(base, false),
		PP:          p.intField(base+1, false),
		AttentionDP: p.intField(base+2, false),
		MoETP:       p.intField(base+3, false),
		MoEEP:       p.intField(base+4, false),
	}
}

func (p *rowParser) row(line int) Row {
	r := Row{Line: line}
	r.ID = p.str(0)
	if r.ID == "" {
		_, i := p.field(0)
		p.fail(i, "expected a run identifier, got an empty field")
	}
	r.Source = p.str(1)
	s, i := p.field(2)
	e, err := ParseEngine(s)
	if err != nil {
		p.fail(i, "expected vllm, sglang or trtllm, got %q", s)
	}
	r.Engine = e
	r.EngineVersion = p.str(3)
	r.Model = p.str(4)
	if r.Model == "" {
		_, i := p.field(4)
		p.fail(i, "expected a model path, got an empty field")
	}
	r.GPU = strings.ToLower(p.str(5))
	if r.GPU == "" {
		_, i := p.field(5)
		p.fail(i, "expected a system name, got an empty field")
	}
	r.Precision = p.str(6)
	s, i = p.field(7)
	switch s {
	case "agg":
		r.Mode = Agg
	case "disagg":
		r.Mode = Disagg
	default:
		p.fail(i, "expected agg or disagg, got %q", s)
	}
	r.InputTokens = p.intField(8, true)
	r.OutputTokens = p.intField(9, true)
	r.GEMMQuant = p.str(10)
	r.MoEQuant = p.str(11)
	bs := p.intField(12, r.Mode == Agg)
	r.Agg = p.parallel(13)
	r.Prefill = Worker{BatchSize: p.intField(18, false), Workers: p.intField(19, false), Parallel: p.parallel(20)}
	r.Decode = Worker{BatchSize: p.intField(25, false), Workers: p.intField(26, false), Parallel: p.parallel(27)}
	r.TTFTms = p.msField(32)
	r.TPOTms = p.msField(33)
	r.BatchSize = bs
	r.Concurrency = bs * max(1, r.Agg.AttentionDP)
	if m := concurrencyInSource.FindStringSubmatch(r.Source); m != nil {
		r.Concurrency, _ = strconv.Atoi(m[1])
	} else if m := concurrencyInID.FindStringSubmatch(r.ID); m != nil {
		r.Concurrency, _ = strconv.Atoi(m[1])
	}
	return r
}

// readLayout reads the row's layouts as written (Parallel.read, with ids
// the row's own id and those of the rows recording the same measurement),
// dropping batch_size where it was the concurrency over a written
// attention DP degree the layout read changes: the rank's clients then
// follow from the degree read.
func (r *Row) readLayout(ids string) {
	node := 0
	if g, err := hw.Lookup(r.GPU); err == nil {
		node = nvlinkNode(g)
	}
	var changed bool
	r.Agg, changed = r.Agg.read(ids, node)
	r.Prefill.Parallel, _ = r.Prefill.Parallel.read(ids, node)
	r.Decode.Parallel, _ = r.Decode.Parallel.read(ids, node)
	if changed {
		r.BatchSize = 0
	}
}

// read is a layout as the data means it: the products of productTP read
// as their runs, then a moe_tp_size above tp_size as attention DP
// (attentionDP). It reports whether the attention DP degree written
// changed.
func (p Parallel) read(ids string, node int) (Parallel, bool) {
	q, dropped := p.productTP(ids, node)
	q, reread := q.attentionDP()
	return q, dropped || reread
}

// productTP reads the layouts two of the data's snapshots write as
// products for InferenceX's tpN_epN runs without attention DP (N GPUs,
// attention N-way tensor parallel, experts N-way expert parallel, moe tp
// 1), as those runs:
//
//   - tp_size N², moe_tp_size N, moe_ep_size N (SGLang's and
//     TensorRT-LLM's tp8_ep8 as tp_size 64, moe tp 8, ep 8), where
//     2026-03-25.csv writes the same runs tp 8, moe tp 1, ep 8;
//   - tp_size N, attention_dp_size N, moe_tp_size 1, moe_ep_size N²
//     (vLLM's tp4_ep4 as attention DP 4, ep 16, batch_size the
//     concurrency / 4), where other files write the same runs tp 4, ep 4.
//
// The reading is taken where the run's id, or that of a row recording
// the same measurement (GPU, engine and both means as written), names it
// (..._tpN_epN...; ids holds them, space-separated), or where the layout
// as written would span N² GPUs, more than one HGX node of node GPUs
// (nvlinkNode; 0 for a GPU whose NVLink domain spans nodes, as a GB200 rack's does:
// there a 16-GPU layout can be what it says); elsewhere (AIConfigurator's
// ..._tp4_epnone_... at tp 4, moe tp 2 × ep 2, a consistent 4-GPU
// layout) the layout is returned as written.
// It returns the layout read and whether it dropped a written attention
// DP degree (batch_size was then the concurrency over it).
func (p Parallel) productTP(ids string, node int) (Parallel, bool) {
	n := p.MoEEP
	var q Parallel
	switch {
	case n > 1 && p.MoETP == n && p.TP == n*n && p.AttentionDP <= 1:
		q = p
		q.TP, q.MoETP = n, 1
	case p.TP > 1 && p.AttentionDP == p.TP && p.MoETP <= 1 && n == p.TP*p.TP:
		n = p.TP
		q = p
		q.AttentionDP, q.MoETP, q.MoEEP = 1, 1, n
	default:
		return p, false
	}
	if !(node > 0 && n*n > node) && !strings.Contains(ids, fmt.Sprintf("_tp%d_ep%d", n, n)) {
		return p, false
	}
	return q, p.AttentionDP > 1
}

// attentionDP reads a layout whose moe_tp_size exceeds its tp_size as
// attention data parallelism, the way TensorRT-LLM's attention-DP runs
// are written (ids such as ..._tp8_ep8 with tp_size 1, moe_tp_size 8,
// moe_ep_size 8 and attention_dp_size 64): the engine's GPUs are
// moe_tp_size, the attention runs tp_size-way tensor parallel on
// moe_tp_size / tp_size data-parallel ranks, and the experts are spread
// moe_ep_size-way over the same GPUs, each split moe_tp_size /
// moe_ep_size ways. The written attention_dp_size (64 above, the product
// of the two MoE degrees) is replaced. It returns the layout read and
// whether it changed; a layout whose degrees do not divide is kept as
// written (and refused by the predictor when it spans too many GPUs).
func (p Parallel) attentionDP() (Parallel, bool) {
	tp, ep := max(p.TP, 1), max(p.MoEEP, 1)
	gpus := p.MoETP
	if gpus <= tp || gpus%tp != 0 || gpus%ep != 0 {
		return p, false
	}
	q := p
	q.AttentionDP = gpus / tp
	q.MoETP = gpus / ep
	return q, q != p
}

// RankClients returns the closed-loop clients one engine rank (one
// attention-DP rank of one replica) serves in an agg run: BatchSize when
// given, else Concurrency split evenly over the attention-DP ranks
// (rounded up).
func (r Row) RankClients() int {
	if r.BatchSize > 0 {
		return r.BatchSize
	}
	dp := max(1, r.Agg.AttentionDP)
	return (r.Concurrency + dp - 1) / dp
}

// Cell is the key of one validation cell: GPU, model, engine and mode.
type Cell struct {
	GPU    string
	Model  string
	Engine Engine
	Mode   Mode
}

// String returns gpu/model/engine/mode.
func (c Cell) String() string {
	return c.GPU + "/" + c.Model + "/" + c.Engine.String() + "/" + c.Mode.String()
}

// CellOf returns the row's validation cell.
func (r Row) CellOf() Cell {
	return Cell{GPU: r.GPU, Model: r.Model, Engine: r.Engine, Mode: r.Mode}
}
