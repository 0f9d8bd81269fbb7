package kernel

import (
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"splitplan/arch"
	"splitplan/hw"
)

// Kind is what a row of a kernel measurement file measures.
type Kind string

// The kinds of a kernel measurement file's rows.
const (
	Prefill Kind = "prefill"
	Decode  Kind = "decode"
	Mixed   Kind = "mixed"
	GEMM    Kind = "gemm"
	Copy    Kind = "copy"
	Idle    Kind = "idle"
)

// Row is one measurement of a kernels.csv or mixed.csv file (the format of
// ../shared/data/gpu-kernels, written by tools/gpu-profile).
type Row struct {
	// Line is the row's line in its file (the header is line 1).
	Line int
	// Model is the model's name (an arch built-in), "gemm" or
	// "gemm-fp8" for GEMM rows; TP the share; Layers the layers run.
	Model      string
	TP, Layers int
	Kind       Kind
	// Prompts prompts of TokensPerPrompt tokens each; Batch decodes at
	// ContextPerRequest tokens each.
	Prompts, TokensPerPrompt, Batch, ContextPerRequest int
	// M, N, K are a GEMM's shape (M is the bytes for a copy).
	M, N, K float64
	// TimeS is the measured time in seconds; PowerW the average board
	// power and SMMHz the average SM clock (0: not measured).
	TimeS, PowerW, SMMHz float64
}

// columns are the columns a kernel file must have.
var columns = []string{"model", "tp", "layers", "kind", "prompts", "tokens_per_prompt", "batch", "context_per_request", "m", "n", "k", "time_ms"}

// readHeader reads a measurement file's header and returns each column's
// index; every one of want must be there (name is the file, for errors).
func readHeader(cr *csv.Reader, name string, want []string) (map[string]int, error) {
	head, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty file: expected a header with %s", name, strings.Join(want, ","))
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	idx := map[string]int{}
	for i, h := range head {
		idx[strings.TrimSpace(h)] = i
	}
	for _, c := range want {
		if _, ok := idx[c]; !ok {
			return nil, fmt.Errorf("%s:1: missing column %q (expected %s)", name, c, strings.Join(want, ","))
		}
	}
	return idx, nil
}

// readRecords reads a measurement file's rows after its header, whose
// columns must include want: each record, with its line and the header's
// column indexes, to row, which returns the row or an error naming the
// file and line; a file without rows is an error too.
func readRecords[R any](cr *csv.Reader, name string, want []string, row func(line int, rec []string, idx map[string]int) (R, error)) ([]R, error) {
	idx, err := readHeader(cr, name, want)
	if err != nil {
		return nil, err
	}
	var rows []R
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		r, err := row(line, rec, idx)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no rows", name)
	}
	return rows, nil
}

// gunzipped returns r decompressed when name ends in .gz (r itself
// otherwise) and the function that closes the decompressor; a gzip error
// names the file.
func gunzipped(r io.Reader, name string) (io.Reader, func(), error) {
	if !strings.HasSuffix(name, ".gz") {
		return r, func() {}, nil
	}
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return zr, func() { zr.Close() }, nil
}

// readMeasurements reads a measurement table from r, gzip-compressed when
// name ends in .gz, with readRecords.
func readMeasurements[R any](r io.Reader, name string, want []string, row func(line int, rec []string, idx map[string]int) (R, error)) ([]R, error) {
	r, done, err := gunzipped(r, name)
	if err != nil {
		return nil, err
	}
	defer done()
	return readRecords(csv.NewReader(r), name, want, row)
}

// intField is a column of a record and where its value goes.
type intField struct {
	col string
	v   *int
}

// positiveInts reads each field's column of record rec (line line of file
// name) as a positive integer; an error names the file, line and column.
func positiveInts(name string, line int, rec []string, idx map[string]int, fields ...intField) error {
	for _, f := range fields {
		v, err := strconv.Atoi(strings.TrimSpace(rec[idx[f.col]]))
		if err != nil || v < 1 {
			return fmt.Errorf("%s:%d: %s = %q: expected a positive integer", name, line, f.col, rec[idx[f.col]])
		}
		*f.v = v
	}
	return nil
}

// The bounds of a measured time, in milliseconds: no kernel or iteration
// a GPU runs takes under a microsecond (a kernel launch alone takes a few)
// or over an hour; a figure beyond them is a unit slip or a corrupt row,
// and would print as an error of 10^300 percent.
const (
	MinTimeMs = 1e-3
	MaxTimeMs = 3.6e6
)

// maxColumn bounds a kernel file's other figures: counts and shapes far
// beyond any model or GPU, power beyond any board (10 kW), clocks beyond
// any chip (10 GHz), and a copy of at most a petabyte.
var maxColumn = map[string]float64{
	"m": 1e15, "n": 1e15, "k": 1e15,
	"avg_power_w": 1e4, "avg_sm_mhz": 1e4,
}

// checkTimeMs checks a measured time in milliseconds against the bounds.
func checkTimeMs(name string, line int, col, s string, ms float64) error {
	if ms < MinTimeMs || ms > MaxTimeMs {
		return fmt.Errorf("%s:%d: %s = %q: expected a time between %g ms (a microsecond) and %g ms (an hour)", name, line, col, s, MinTimeMs, MaxTimeMs)
	}
	return nil
}

// latencySeconds reads record rec's latency_ms column, a positive finite
// number of milliseconds within the bounds of a measured time, in
// seconds; an error names the file and line.
func latencySeconds(name string, line int, rec []string, idx map[string]int) (float64, error) {
	s := strings.TrimSpace(rec[idx["latency_ms"]])
	ms, err := strconv.ParseFloat(s, 64)
	if err != nil || !(ms > 0) || math.IsInf(ms, 0) {
		return 0, fmt.Errorf("%s:%d: latency_ms = %q: expected a positive number of milliseconds", name, line, rec[idx["latency_ms"]])
	}
	if err := checkTimeMs(name, line, "latency_ms", s, ms); err != nil {
		return 0, err
	}
	return ms / 1e3, nil
}

// ReadFile reads the kernel measurement file at path (ReadCSV): an error
// opening it is os.Open's, one in it names the file and line.
func ReadFile(path string) ([]Row, error) {
	return readFile(path, ReadCSV)
}

// readFile opens path and reads it with read.
func readFile[R any](path string, read func(io.Reader, string) ([]R, error)) ([]R, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f, path)
}

// ReadCSV reads a kernel measurement file; name is used in errors, which
// name the file and line.
func ReadCSV(r io.Reader, name string) ([]Row, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	return readRecords(cr, name, columns, func(line int, rec []string, idx map[string]int) (Row, error) {
		get := func(c string) string {
			i, ok := idx[c]
			if !ok || i >= len(rec) {
				return ""
			}
			return strings.TrimSpace(rec[i])
		}
		num := func(c string) (float64, error) {
			s := get(c)
			if s == "" {
				return 0, nil
			}
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				return 0, fmt.Errorf("%s:%d: column %s = %q: expected a non-negative number", name, line, c, s)
			}
			if hi, ok := maxColumn[c]; ok && v > hi {
				return 0, fmt.Errorf("%s:%d: column %s = %q: expected at most %g", name, line, c, s, hi)
			}
			return v, nil
		}
		row := Row{Line: line, Model: get("model"), Kind: Kind(get("kind"))}
		var v [12]float64
		var err error
		for i, c := range []string{"tp", "layers", "prompts", "tokens_per_prompt", "batch", "context_per_request", "m", "n", "k", "time_ms", "avg_power_w", "avg_sm_mhz"} {
			if v[i], err = num(c); err != nil {
				return Row{}, err
			}
			if i < 6 && (v[i] != math.Trunc(v[i]) || v[i] > math.MaxInt32) {
				return Row{}, fmt.Errorf("%s:%d: column %s = %q: expected a whole number (at most %d)", name, line, c, get(c), math.MaxInt32)
			}
		}
		row.TP, row.Layers, row.Prompts, row.TokensPerPrompt, row.Batch, row.ContextPerRequest = int(v[0]), int(v[1]), int(v[2]), int(v[3]), int(v[4]), int(v[5])
		row.M, row.N, row.K, row.TimeS, row.PowerW, row.SMMHz = v[6], v[7], v[8], v[9]/1e3, v[10], v[11]
		bad := func(what string) error {
			return fmt.Errorf("%s:%d: %s row: %s", name, line, row.Kind, what)
		}
		if v[9] != 0 { // (an idle row may leave it blank)
			if err := checkTimeMs(name, line, "time_ms", get("time_ms"), v[9]); err != nil {
				return Row{}, err
			}
		}
		switch row.Kind {
		case Prefill:
			if row.Prompts < 1 || row.TokensPerPrompt < 1 {
				return Row{}, bad("expected prompts ≥ 1 and tokens_per_prompt ≥ 1")
			}
		case Decode:
			if row.Batch < 1 || row.ContextPerRequest < 1 {
				return Row{}, bad("expected batch ≥ 1 and context_per_request ≥ 1")
			}
		case Mixed:
			if row.Prompts < 1 || row.TokensPerPrompt < 1 || row.Batch < 1 || row.ContextPerRequest < 1 {
				return Row{}, bad("expected prompts, tokens_per_prompt, batch and context_per_request ≥ 1")
			}
		case GEMM:
			if row.M < 1 || row.N < 1 || row.K < 1 {
				return Row{}, bad("expected m, n and k ≥ 1")
			}
		case Copy:
			if row.M < 1 {
				return Row{}, bad("expected m (the bytes copied) ≥ 1")
			}
		case Idle:
			return row, nil
		default:
			return Row{}, fmt.Errorf("%s:%d: kind %q: expected prefill, decode, mixed, gemm, copy or idle", name, line, row.Kind)
		}
		if !(row.TimeS > 0) {
			return Row{}, bad("expected time_ms > 0")
		}
		if row.IsIteration() && row.TP < 1 {
			return Row{}, bad("expected tp ≥ 1")
		}
		return row, nil
	})
}

// IsIteration reports whether r is a prefill, decode or mixed iteration.
func (r Row) IsIteration() bool { return r.Kind == Prefill || r.Kind == Decode || r.Kind == Mixed }

// IsMoE reports whether r is an iteration row of a mixture-of-experts
// built-in (false for any other row and for an unknown model).
func (r Row) IsMoE() bool {
	return r.archIs(arch.Arch.IsMoE)
}

// IsMLA reports whether r is an iteration row of a model with multi-head
// latent attention (DeepSeek-V3's). The fit leaves such rows out: the
// kernel layer prices MLA's decode in its prefill form (arch's
// AttentionFLOPsPerContextToken), while the profiler measures the
// weight-absorbed decode engines run; they are validated, not fitted.
func (r Row) IsMLA() bool {
	return r.archIs(arch.Arch.IsMLA)
}

// Fitted reports whether Fit uses r when asked to fit every row: every
// row but a latent-attention model's (IsMLA). A fit of a whole table
// validates its rows with it as the in-fit set.
func Fitted(r Row) bool { return !r.IsMLA() }

// archIs reports whether r is an iteration row of a built-in model for
// which is holds.
func (r Row) archIs(is func(arch.Arch) bool) bool {
	if !r.IsIteration() {
		return false
	}
	a, err := arch.Lookup(r.Model)
	return err == nil && is(a)
}

// Precision returns the weights' precision of a GEMM or iteration row:
// fp8 for model "gemm-fp8" and for an iteration row whose model name ends
// in -fp8 (tools/gpu-profile --weights fp8: the layers' projections as
// e4m3 GEMMs, the KV cache and the LM head bf16), bf16 otherwise.
func (r Row) Precision() arch.Precision {
	if strings.Contains(r.Model, "fp8") {
		return arch.FP8
	}
	return arch.BF16
}

// Arch returns the architecture of an iteration row: the built-in named
// by its model, or its first Layers layers when the row ran fewer (as
// tools/gpu-profile --max-layers runs them): a dense model's first Layers
// layers; a mixture-of-experts model's FirstDenseLayers dense layers, then
// Layers − FirstDenseLayers MoE layers, at least one. A model with
// sliding-window or linear-attention layers (whose order the
// architecture does not record) must run all of them.
func (r Row) Arch() (arch.Arch, error) {
	a, err := arch.Lookup(r.Model)
	if err != nil {
		return arch.Arch{}, err
	}
	if r.Layers > 0 && r.Layers != a.Layers {
		if r.Layers > a.Layers || a.SlidingWindowLayers > 0 || a.LinearAttentionLayers > 0 {
			return arch.Arch{}, fmt.Errorf("%s runs %d layers of %d", a.Name, r.Layers, a.Layers)
		}
		if a.IsMoE() && r.Layers <= a.FirstDenseLayers {
			return arch.Arch{}, fmt.Errorf("%s runs %d layers of %d: expected more than its %d dense layers (one MoE layer at least)",
				a.Name, r.Layers, a.Layers, a.FirstDenseLayers)
		}
		a.Layers = r.Layers
	}
	return a, nil
}

// Predict returns the kernel layer's time in seconds for r on g: a GEMM
// row's GEMM, an iteration row's iteration (weights at r.Precision(), the
// KV cache bf16).
// Copy and idle rows are not predicted and give an error.
func Predict(p Params, g hw.GPU, r Row) (float64, error) {
	switch r.Kind {
	case GEMM:
		if err := p.Validate(); err != nil {
			return 0, err
		}
		return p.GEMMTime(g, r.Precision(), r.M, r.N, r.K, 1), nil
	case Prefill, Decode, Mixed:
		a, err := r.Arch()
		if err != nil {
			return 0, err
		}
		l, err := New(p, a, g, r.TP, r.Precision(), arch.BF16)
		if err != nil {
			return 0, err
		}
		return l.rowTime(r), nil
	}
	return 0, fmt.Errorf("kernel: a %s row is not an iteration or a GEMM", r.Kind)
}

// rowTime is the layer's time for an iteration row.
func (l *Layer) rowTime(r Row) float64 {
	var pt, prompts, d int
	var pairs, ctx float64
	if r.Kind == Prefill || r.Kind == Mixed {
		pt, prompts = r.Prompts*r.TokensPerPrompt, r.Prompts
		L := float64(r.TokensPerPrompt)
		pairs = float64(r.Prompts) * L * (L + 1) / 2
	}
	if r.Kind == Decode || r.Kind == Mixed {
		d = r.Batch
		ctx = float64(r.Batch) * float64(r.ContextPerRequest)
	}
	return l.Time(pt, prompts, pairs, d, ctx, 1, nil)
}
