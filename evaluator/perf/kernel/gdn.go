package kernel

import (
	"errors"
	"fmt"
	"io"
	"math"

	"gonum.org/v1/gonum/optimize"

	"splitplan/arch"
	"splitplan/hw"
)

// GDNParams are the constants of a Gated DeltaNet layer's own kernels
// (the linear attention of Qwen3.5 and Qwen3-Next: a short causal
// convolution and the delta rule over a fixed-size state per value head),
// the same for every GPU by the carry rule: fitted on the H100's
// measurements (data/gdn-kernels), its compute at a fraction of the GPU's
// bf16 peak, its state traffic at a fraction of its bandwidth, and its
// latencies in seconds.
type GDNParams struct {
	// PrefillLatencyS is a prompt's fixed time in one layer (the kernels'
	// launches); PrefillTokenS the time per prompt token that does not
	// shrink with the GPU (the chunked recurrence steps from chunk to
	// chunk in order); PrefillCompute the fraction of the bf16 peak the
	// chunked delta rule reaches on its 4·dk·dv FLOPs per token and value
	// head.
	PrefillLatencyS float64 `toml:"prefill_latency_s"`
	PrefillTokenS   float64 `toml:"prefill_token_s"`
	PrefillCompute  float64 `toml:"prefill_compute"`
	// DecodeLatencyS is a decode step's fixed time in one layer;
	// DecodeMemory the fraction of the HBM bandwidth at which each
	// sequence's state, dk·dv bf16 values per value head, is read and
	// written once.
	DecodeLatencyS float64 `toml:"decode_latency_s"`
	DecodeMemory   float64 `toml:"decode_memory"`
}

// gdnFLOPsPerHead are the chunked delta rule's FLOPs per token and value
// head of key width dk and value width dv, as GDNParams counts them: 4·dk·dv
// (the state's read by the query and the key, its rank-one update).
func gdnFLOPsPerHead(dk, dv float64) float64 { return 4 * dk * dv }

// gdnStateBytesPerHead are the bytes of one value head's state read and
// written in a decode step: dk·dv bf16 values, twice (the state's dtype
// InferenceX's Qwen3.5 scripts set, --mamba-ssm-dtype bfloat16; counted in
// fp32 the H100's measurements would need its bandwidth's ceiling).
func gdnStateBytesPerHead(dk, dv float64) float64 { return 2 * 2 * dk * dv }

// Validate checks the fractions lie in (0, their ceilings] and the times
// are finite seconds in [0, 1].
func (q GDNParams) Validate() error {
	if !(q.PrefillCompute > 0 && q.PrefillCompute <= MaxComputeFraction) {
		return fmt.Errorf("kernel: gdn prefill_compute = %v: expected a fraction in (0, %v]", q.PrefillCompute, MaxComputeFraction)
	}
	if !(q.DecodeMemory > 0 && q.DecodeMemory <= MaxMemoryFraction) {
		return fmt.Errorf("kernel: gdn decode_memory = %v: expected a fraction in (0, %v]", q.DecodeMemory, MaxMemoryFraction)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"prefill_latency_s", q.PrefillLatencyS}, {"prefill_token_s", q.PrefillTokenS}, {"decode_latency_s", q.DecodeLatencyS}} {
		if !(f.v >= 0 && f.v <= 1) {
			return fmt.Errorf("kernel: gdn %s = %v: expected seconds in [0, 1]", f.name, f.v)
		}
	}
	return nil
}

// PrefillTime returns the seconds one Gated DeltaNet layer takes on g for
// tokens prompt tokens with vheads value heads of widths dk and dv on the
// GPU, its compute at clock (a fraction of the full clock).
func (q GDNParams) PrefillTime(g hw.GPU, tokens, vheads, dk, dv, clock float64) float64 {
	if tokens <= 0 {
		return 0
	}
	return q.PrefillLatencyS + tokens*(q.PrefillTokenS+vheads*gdnFLOPsPerHead(dk, dv)/(g.PeakFLOPs(arch.BF16)*q.PrefillCompute*clock))
}

// DecodeTime returns the seconds one Gated DeltaNet layer takes on g for
// a decode step of seqs sequences with vheads value heads of widths dk
// and dv on the GPU.
func (q GDNParams) DecodeTime(g hw.GPU, seqs, vheads, dk, dv float64) float64 {
	if seqs <= 0 {
		return 0
	}
	return q.DecodeLatencyS + seqs*vheads*gdnStateBytesPerHead(dk, dv)/(g.MemoryBytesPerS()*q.DecodeMemory)
}

// GDNRow is one measured Gated DeltaNet layer: its kernels' times summed
// (ReadGDNCSV sums the convolution's and the delta rule's rows of the
// same shape).
type GDNRow struct {
	// Line is the first of the row's lines in its file.
	Line int
	// Prefill: a prompt phase (context), else a decode step.
	Prefill bool
	// Batch sequences of Tokens tokens in all; KHeads and VHeads key and
	// value heads on the GPU, of widths KDim and VDim.
	Batch, Tokens              int
	KHeads, KDim, VHeads, VDim int
	Model                      string
	TimeS                      float64
	kernels, seqLen            int
	phase                      string
}

// shape is r without what differs between its kernels' rows (line,
// time, count): the key their times are summed under.
func (r GDNRow) shape() GDNRow {
	r.Line, r.TimeS, r.kernels = 0, 0, 0
	return r
}

// Time returns q's time for r on g.
func (q GDNParams) Time(g hw.GPU, r GDNRow) float64 {
	if r.Prefill {
		return q.PrefillTime(g, float64(r.Tokens), float64(r.VHeads), float64(r.KDim), float64(r.VDim), 1)
	}
	return q.DecodeTime(g, float64(r.Batch), float64(r.VHeads), float64(r.KDim), float64(r.VDim))
}

// gdnColumns are the columns of a Gated DeltaNet measurement file.
var gdnColumns = []string{"phase", "kernel_source", "batch_size", "seq_len", "num_tokens", "num_k_heads", "head_k_dim", "num_v_heads", "head_v_dim", "model_name", "latency_ms"}

// ReadGDNFile reads the Gated DeltaNet measurement file at path
// (ReadGDNCSV).
func ReadGDNFile(path string) ([]GDNRow, error) {
	return readFile(path, ReadGDNCSV)
}

// ReadGDNCSV reads a Gated DeltaNet measurement file (gzip-compressed when
// its name ends in .gz; data/gdn-kernels/README.md) into one row per layer
// shape, its two kernels' times summed; name is used in errors, which name
// the file and line. A shape with only one of its phase's kernels (the
// largest points, where AIConfigurator's collection failed) is left out;
// one with more than two is an error.
func ReadGDNCSV(r io.Reader, name string) ([]GDNRow, error) {
	rows, err := readMeasurements(r, name, gdnColumns, func(line int, rec []string, idx map[string]int) (GDNRow, error) {
		g := GDNRow{Line: line, phase: rec[idx["phase"]], Model: rec[idx["model_name"]]}
		switch g.phase {
		case "context":
			g.Prefill = true
		case "generation":
		default:
			return GDNRow{}, fmt.Errorf("%s:%d: phase = %q: expected context or generation", name, line, g.phase)
		}
		if err := positiveInts(name, line, rec, idx, intField{"batch_size", &g.Batch}, intField{"seq_len", &g.seqLen}, intField{"num_tokens", &g.Tokens},
			intField{"num_k_heads", &g.KHeads}, intField{"head_k_dim", &g.KDim}, intField{"num_v_heads", &g.VHeads}, intField{"head_v_dim", &g.VDim}); err != nil {
			return GDNRow{}, err
		}
		var err error
		g.TimeS, err = latencySeconds(name, line, rec, idx)
		g.kernels = 1
		return g, err
	})
	if err != nil {
		return nil, err
	}
	// One layer per shape: its kernels' times summed.
	by := map[GDNRow]int{}
	var out []GDNRow
	for _, g := range rows {
		if i, ok := by[g.shape()]; ok {
			out[i].TimeS += g.TimeS
			out[i].kernels++
			continue
		}
		by[g.shape()] = len(out)
		out = append(out, g)
	}
	complete := out[:0]
	for _, g := range out {
		switch {
		case g.kernels == 2:
			complete = append(complete, g)
		case g.kernels > 2:
			return nil, fmt.Errorf("%s:%d: %s phase of %s (%d sequences of %d tokens, %d value heads): %d kernel rows, expected 2 (the convolution and the delta rule)", name, g.Line, g.phase, g.Model, g.Batch, g.seqLen, g.VHeads, g.kernels)
		}
	}
	if len(complete) == 0 {
		return nil, fmt.Errorf("%s: no shape with both of its phase's kernels", name)
	}
	return complete, nil
}

// FitGDN fits the Gated DeltaNet constants on rows measured on g: the
// prompt's three and the decode's two, minimising the squared log errors
// of Time (Nelder–Mead from a few microseconds and a tenth of the peak
// and bandwidth). Both phases need rows.
func FitGDN(g hw.GPU, rows []GDNRow) (GDNParams, error) {
	var pre, dec []GDNRow
	for _, r := range rows {
		if r.Prefill {
			pre = append(pre, r)
		} else {
			dec = append(dec, r)
		}
	}
	if len(pre) == 0 || len(dec) == 0 {
		return GDNParams{}, errors.New("gdn fit: rows of both phases needed")
	}
	sig := func(v, ceil float64) float64 { return ceil / (1 + math.Exp(-v)) }
	loss := func(q GDNParams, rs []GDNRow) float64 {
		var s float64
		for _, r := range rs {
			e := math.Log(q.Time(g, r) / r.TimeS)
			s += e * e
		}
		return s
	}
	run := func(f func([]float64) float64, x0 []float64) ([]float64, error) {
		res, err := optimize.Minimize(optimize.Problem{Func: f}, x0,
			&optimize.Settings{FuncEvaluations: 6000, Converger: &optimize.FunctionConverge{Absolute: 1e-12, Iterations: 300}}, &optimize.NelderMead{})
		if err != nil && res == nil {
			return nil, err
		}
		return res.X, nil
	}
	preAt := func(x []float64) GDNParams {
		return GDNParams{PrefillLatencyS: math.Exp(x[0]), PrefillTokenS: math.Exp(x[1]), PrefillCompute: sig(x[2], MaxComputeFraction), DecodeMemory: 1, DecodeLatencyS: 0}
	}
	xp, err := run(func(x []float64) float64 { return loss(preAt(x), pre) }, []float64{math.Log(20e-6), math.Log(10e-9), -2})
	if err != nil {
		return GDNParams{}, fmt.Errorf("gdn fit, prompts: %w", err)
	}
	decAt := func(x []float64) GDNParams {
		return GDNParams{DecodeLatencyS: math.Exp(x[0]), DecodeMemory: sig(x[1], MaxMemoryFraction), PrefillCompute: 1}
	}
	xd, err := run(func(x []float64) float64 { return loss(decAt(x), dec) }, []float64{math.Log(5e-6), 0})
	if err != nil {
		return GDNParams{}, fmt.Errorf("gdn fit, decodes: %w", err)
	}
	p, d := preAt(xp), decAt(xd)
	q := GDNParams{PrefillLatencyS: p.PrefillLatencyS, PrefillTokenS: p.PrefillTokenS, PrefillCompute: p.PrefillCompute, DecodeLatencyS: d.DecodeLatencyS, DecodeMemory: d.DecodeMemory}
	return q, q.Validate()
}

// GDNOn returns the Gated DeltaNet constants of g's generation:
// GDNBlackwell (fitted on the B200) on Blackwell, GDN (fitted on the H100)
// on every other GPU, carried by the spec sheet within the generation.
func GDNOn(g hw.GPU) GDNParams {
	if hw.Generation(g.Name) == "blackwell" {
		return GDNBlackwell
	}
	return GDN
}

// gdnPeers returns g and the GPUs of the catalog (hw.Builtin) g
// kernel-dominates (hw.KernelDominates: at least their peaks and
// bandwidth): the GPUs whose Gated DeltaNet times bound g's. The power
// limit and links do not enter: these kernels run one GPU far below its
// peak (0.014–0.020 of it).
func gdnPeers(g hw.GPU) []hw.GPU {
	out := []hw.GPU{g}
	for _, h := range hw.Builtin() {
		if h != g && hw.KernelDominates(g, h) {
			out = append(out, h)
		}
	}
	return out
}

// gdnTerms are a model's Gated DeltaNet layers on one GPU, summed over
// them: a prompt's fixed seconds, seconds per prompt token (clock-free,
// and compute at the clock), a decode step's fixed seconds and seconds per
// sequence.
type gdnTerms struct {
	promptS, tokenS, tokenC float64
	decodeS, seqS           float64
}

// layerTerms returns q's terms on g for n layers of hv value heads a GPU,
// of widths dk and dv (PrefillTime's and DecodeTime's, summed over the
// layers and split for the kernel layer's precomputation).
func (q GDNParams) layerTerms(g hw.GPU, n, hv, dk, dv float64) gdnTerms {
	return gdnTerms{
		promptS: n * q.PrefillLatencyS, tokenS: n * q.PrefillTokenS,
		tokenC:  n * hv * gdnFLOPsPerHead(dk, dv) / (g.PeakFLOPs(arch.BF16) * q.PrefillCompute),
		decodeS: n * q.DecodeLatencyS,
		seqS:    n * hv * gdnStateBytesPerHead(dk, dv) / (g.MemoryBytesPerS() * q.DecodeMemory),
	}
}

// covers reports whether t is nowhere slower than u: no term larger, so
// u never gives a prompt or decode less time.
func (t gdnTerms) covers(u gdnTerms) bool {
	return t.promptS <= u.promptS && t.tokenS <= u.tokenS && t.tokenC <= u.tokenC && t.decodeS <= u.decodeS && t.seqS <= u.seqS
}

// prompt returns the seconds of pt prompt tokens, compute at 1/inv of the
// clock, and the compute part.
func (t gdnTerms) prompt(pt, inv float64) (s, c float64) {
	c = pt * t.tokenC * inv
	return t.promptS + pt*t.tokenS + c, c
}

// decode returns the seconds of a decode step of d sequences.
func (t gdnTerms) decode(d float64) float64 { return t.decodeS + d*t.seqS }

// gdnLayerTerms returns the terms of n Gated DeltaNet layers on g and on
// each of its peers (gdnPeers), each with its generation's constants,
// leaving out those another covers: the kernel layer takes the least of
// them per prompt and decode (GDNTime's rule), and a covered set is never
// the least.
func gdnLayerTerms(g hw.GPU, n, hv, dk, dv float64) []gdnTerms {
	var all []gdnTerms
	for _, h := range gdnPeers(g) {
		all = append(all, GDNOn(h).layerTerms(h, n, hv, dk, dv))
	}
	var out []gdnTerms
	for i, t := range all {
		covered := false
		for j, u := range all {
			// Of equal sets the first is kept.
			if j != i && u.covers(t) && (u != t || j < i) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, t)
		}
	}
	return out
}

// GDNTime returns the seconds one Gated DeltaNet layer of row r's shape
// takes on g: the least, over g and the GPUs it has the specs of
// (gdnPeers), of that GPU's time with its generation's constants (GDNOn).
// The constants
// differ by generation and the kernels are latency-bound (AIConfigurator
// measured SGLang's slower on the B200 than on the H200 for 1,734 of its
// 4,409 shapes), so a GPU takes the time of such a GPU where that is
// less: it could run that GPU's kernel at least as fast, and a GPU with
// at least another's specs is never slower on the same work.
func GDNTime(g hw.GPU, r GDNRow) float64 {
	t := math.Inf(1)
	for _, h := range gdnPeers(g) {
		t = min(t, GDNOn(h).Time(h, r))
	}
	return t
}

// GDNValidation is the error of the Gated DeltaNet times on a file's
// rows: the median and P90 absolute % error of the prompts' and the
// decodes' rows.
type GDNValidation struct{ Prefill, Decode Summary }

// ValidateGDN predicts every row on g as the kernel layer does (GDNTime).
func ValidateGDN(g hw.GPU, rows []GDNRow) GDNValidation {
	var pe, de []float64
	for _, r := range rows {
		e := 100 * math.Abs(GDNTime(g, r)/r.TimeS-1)
		if r.Prefill {
			pe = append(pe, e)
		} else {
			de = append(de, e)
		}
	}
	return GDNValidation{Prefill: summarize(pe), Decode: summarize(de)}
}
