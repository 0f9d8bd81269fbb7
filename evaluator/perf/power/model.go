package power

import (
	"fmt"
	"math"

	"splitplan/arch"
	"splitplan/evaluator/perf/analytic"
	"splitplan/evaluator/perf/kernel"
	"splitplan/hw"
	"splitplan/internal/enum"
)

// Coefficients is the fitted shape of a GPU's draw, every figure a fraction
// of its board power: during an iteration lasting T seconds whose roofline
// terms (analytic.Work.Terms) compute for c_i and move HBM data for m_i
// seconds each, one GPU draws
//
//	min(cap, IdleFraction + Σ_i max(ComputeFraction × c_i, MemoryFraction × m_i) / T)
//
// and IdleFraction between iterations: each term draws as the busier of
// its two sides, so more work never takes less energy.
type Coefficients struct {
	// IdleFraction is the draw of an idle GPU (and the static part of a
	// busy one's).
	IdleFraction float64 `toml:"idle_fraction"`
	// MemoryFraction is the extra draw of HBM busy the whole iteration.
	MemoryFraction float64 `toml:"memory_fraction"`
	// ComputeFraction is the extra draw of the compute units busy the
	// whole iteration.
	ComputeFraction float64 `toml:"compute_fraction"`
}

// Validate checks the fractions are finite, non-negative and the idle draw
// below board power.
func (c Coefficients) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"idle_fraction", c.IdleFraction}, {"memory_fraction", c.MemoryFraction}, {"compute_fraction", c.ComputeFraction}} {
		if !(f.v >= 0 && f.v <= 2) {
			return fmt.Errorf("power: coefficient %s = %v: expected a fraction of board power in [0, 2]", f.name, f.v)
		}
	}
	if c.IdleFraction >= 1 {
		return fmt.Errorf("power: coefficient idle_fraction = %v: expected less than 1 (idle below board power)", c.IdleFraction)
	}
	return nil
}

// Fraction returns one GPU's draw, as a fraction of board power, during an
// iteration of work w lasting seconds, under a cap of capFraction: the
// formula of Coefficients (at most the cap). seconds ≤ 0 or no work gives
// the idle draw.
func (c Coefficients) Fraction(w analytic.Work, seconds, capFraction float64) float64 {
	return c.fraction(&w.Terms, seconds, capFraction)
}

// fraction is Fraction of an iteration whose roofline terms are terms.
func (c Coefficients) fraction(terms *[5]analytic.Term, seconds, capFraction float64) float64 {
	p := c.IdleFraction
	if seconds > 0 {
		var busy float64
		for _, t := range terms {
			busy += max(c.ComputeFraction*max(t.ComputeS, 0), c.MemoryFraction*max(t.MemoryS, 0))
		}
		p += busy / seconds
	}
	return min(p, capFraction)
}

// ProvenanceKind says where a power model's coefficients come from. Its
// names match package evaluator's performance provenance kinds.
type ProvenanceKind int

const (
	// Profiled: fitted on the measured power of this GPU.
	Profiled ProvenanceKind = iota
	// SpecOnly: the shape fitted on another GPU, scaled to this GPU's
	// board power.
	SpecOnly
)

var kindNames = [...]string{Profiled: "profiled", SpecOnly: "spec-only"}

// String is the kind's name: profiled or spec-only.
func (k ProvenanceKind) String() string { return enum.Name(kindNames[:], k, "ProvenanceKind") }

// Provenance is where a power model's numbers come from, in words a report
// can print.
type Provenance struct {
	// Kind is profiled or spec-only.
	Kind ProvenanceKind
	// Source names the fit and the GPU it was scaled to.
	Source string
	// Error is the validation error that goes with the source.
	Error string
}

// String is "kind (source; error)".
func (p Provenance) String() string {
	return enum.Described(p.Kind.String(), p.Source, p.Error)
}

// Model is the power drawn by one machine type serving one model: its
// GPUs' draw while idle and during an iteration, under the machine's power
// cap. It is immutable and safe for concurrent use. All powers are watts
// of the machine's GPUs (the CPUs, NICs and fans are not modelled: they
// enter the provisioned power, costpower.Machine.PowerKW, only); for
// ForReplica the machine is one model replica and its GPUs the replica's.
type Model struct {
	coef    Coefficients
	an      *analytic.Model
	boardW  float64
	gpus    int
	tp      int
	capFrac float64
	prov    Provenance
}

// Config is what New needs to build a Model.
type Config struct {
	// Analytic is the analytic model of the model on the GPU, whose
	// compute and memory split (analytic.Work) sets the iteration's draw.
	Analytic *analytic.Model
	// BoardW is one GPU's board power (TDP) in watts.
	BoardW float64
	// GPUs is the machine's GPU count; the analytic model's TP of them run
	// each iteration, the others stay idle.
	GPUs int
	// CapFraction is the GPUs' power cap as a fraction of BoardW, in
	// (IdleFraction, 1]; 0 means uncapped (1).
	CapFraction float64
	// Coefficients is the draw's shape.
	Coefficients Coefficients
	// Provenance says where Coefficients come from.
	Provenance Provenance
}

// New validates cfg and builds its Model.
func New(cfg Config) (*Model, error) {
	if cfg.Analytic == nil {
		return nil, fmt.Errorf("power: no analytic model")
	}
	if err := cfg.Coefficients.Validate(); err != nil {
		return nil, err
	}
	if !(cfg.BoardW > 0) || math.IsInf(cfg.BoardW, 0) {
		return nil, fmt.Errorf("power: board power %v W: expected a positive number of watts", cfg.BoardW)
	}
	tp := cfg.Analytic.Config().TP
	if cfg.GPUs < tp {
		return nil, fmt.Errorf("power: %d GPUs: expected at least the tensor parallelism %d", cfg.GPUs, tp)
	}
	c := cfg.CapFraction
	if c == 0 {
		c = 1
	}
	if err := checkCap(c, cfg.Coefficients.IdleFraction); err != nil {
		return nil, err
	}
	return &Model{coef: cfg.Coefficients, an: cfg.Analytic, boardW: cfg.BoardW, gpus: cfg.GPUs, tp: tp, capFrac: c, prov: cfg.Provenance}, nil
}

// checkCap checks a cap fraction lies in (idle, 1].
func checkCap(c, idle float64) error {
	if !(c > idle && c <= 1) {
		return fmt.Errorf("power: power cap %v: expected a fraction of board power above the idle draw %.3f and at most 1", c, idle)
	}
	return nil
}

// IdleW is the machine's GPUs' draw in watts with no iteration running.
func (m *Model) IdleW() float64 { return float64(m.gpus) * m.coef.IdleFraction * m.boardW }

// IterationW is the machine's GPUs' average draw in watts during an
// iteration running prompts of promptTokens tokens in all (taken as one
// prompt, as analytic.Model.MixedTime does) together with decodes decoding
// requests whose contexts add up to contextTokens, lasting seconds (the
// duration the simulator's iteration model gave, capped or not). It lies
// between IdleW and GPUs × cap × board power. No work or seconds ≤ 0 gives
// IdleW.
func (m *Model) IterationW(promptTokens, decodes int, contextTokens int64, seconds float64) float64 {
	terms := m.an.BatchTerms(batchOf(promptTokens, decodes, contextTokens))
	busy := m.coef.fraction(&terms, seconds, m.capFrac)
	return (float64(m.tp)*busy + float64(m.gpus-m.tp)*m.coef.IdleFraction) * m.boardW
}

// IterationJ is the energy in joules of that iteration: IterationW ×
// seconds (0 for seconds ≤ 0).
func (m *Model) IterationJ(promptTokens, decodes int, contextTokens int64, seconds float64) float64 {
	if !(seconds > 0) {
		return 0
	}
	return m.IterationW(promptTokens, decodes, contextTokens, seconds) * seconds
}

// CapFraction is the GPUs' power cap as a fraction of board power (1 when
// uncapped).
func (m *Model) CapFraction() float64 { return m.capFrac }

// MaxW is the most the machine's GPUs can draw: GPUs × cap × board power.
func (m *Model) MaxW() float64 { return float64(m.gpus) * m.capFrac * m.boardW }

// Provenance says where the model's coefficients come from.
func (m *Model) Provenance() Provenance { return m.prov }

// GPU is the GPU spec of the model's analytic model.
func (m *Model) GPU() hw.GPU { return m.an.Config().GPU }

// Analytic is the analytic model whose compute and memory split sets the
// draw; NewCapped takes it to slow a machine's iteration model down.
func (m *Model) Analytic() *analytic.Model { return m.an }

// batchOf is the analytic batch of an iteration as analytic.Model's
// perf.IterationModel methods build it: the prompt tokens as one prompt,
// each decode's context at least one token.
func batchOf(promptTokens, decodes int, contextTokens int64) analytic.Batch {
	p, d := max(promptTokens, 0), max(decodes, 0)
	b := analytic.Batch{PromptTokens: p, Decodes: d}
	if p > 0 {
		b.Prompts = 1
		b.PromptAttnPairs = analytic.AttnPairs(p, 0)
	}
	if d > 0 {
		b.DecodeContextTokens = max(contextTokens, int64(d))
	}
	return b
}

// FittedGPU is the GPU spec (package hw) whose measured power the built-in
// coefficients were fitted on (the H100 kernel measurements); every other
// GPU is spec-only: the same fractions of its own board power.
const FittedGPU = KernelGPU

// Replica is one model replica of a machine type as the power model
// reads it: its GPUs' spec sheet, how many run an iteration and how many
// it draws for, their board power and their cap. The resolver makes one
// from a catalog machine type (resolve.Source.ResolvePower: a node
// serving several replicas is one replica of TensorParallel GPUs, which
// is what the simulator runs; the node's draw is InstancesPerMachine such
// models).
type Replica struct {
	// Name names the machine type in errors.
	Name string
	// GPU is the GPUs' spec sheet.
	GPU hw.GPU
	// TP is the replica's tensor parallelism: the GPUs that run each
	// iteration.
	TP int
	// GPUs is the GPUs the replica draws for (TP or more; the others stay
	// idle).
	GPUs int
	// BoardW is one GPU's board power in watts; 0 means GPU's TDP.
	BoardW float64
	// CapFraction is the GPUs' power cap as a fraction of board power, in
	// (IdleFraction, 1]; 0 means uncapped (1).
	CapFraction float64
	// MoE is how the serving engine runs a mixture-of-experts model's
	// routed experts (analytic.Config.MoE; the zero MoEPath for none).
	MoE kernel.MoEPath
}

// ForReplica is the power model of replica r serving a model of
// architecture a at weight precision prec, with analytic efficiencies
// eff, with the built-in coefficients. A replica draws for its own GPUs
// only, never for the node's other replicas' GPUs. The provenance is
// profiled on FittedGPU, spec-only elsewhere.
func ForReplica(r Replica, a arch.Arch, prec arch.Precision, eff analytic.Efficiency) (*Model, error) {
	an, err := analytic.New(analytic.Config{Arch: a, GPU: r.GPU, TP: r.TP, Weights: prec, KV: prec.KVCache(), Eff: eff, MoE: r.MoE})
	if err != nil {
		return nil, fmt.Errorf("power: machine type %s: %w", r.Name, err)
	}
	board := r.BoardW
	if !(board > 0) {
		board = r.GPU.TDPW
	}
	m, err := New(Config{Analytic: an, BoardW: board, GPUs: r.GPUs, CapFraction: r.CapFraction,
		Coefficients: Builtin, Provenance: builtinProvenance(r.GPU.Name, board)})
	if err != nil {
		return nil, fmt.Errorf("machine type %s: %w", r.Name, err)
	}
	return m, nil
}

// builtinProvenance is the provenance of the built-in coefficients on GPU
// spec gpu at board power boardW.
func builtinProvenance(gpu string, boardW float64) Provenance {
	if gpu == FittedGPU {
		return Provenance{Kind: Profiled, Source: "fitted on the board power of H100 kernel iterations (gpu-kernels/h100)", Error: BuiltinHeldOutError}
	}
	return Provenance{Kind: SpecOnly, Source: fmt.Sprintf("the %s fit scaled to %s's %.0f W board power", FittedGPU, gpu, boardW)}
}
