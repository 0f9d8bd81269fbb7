package measured

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"splitplan/arch"
	"splitplan/evaluator/perf/analytic"
	"splitplan/hw"
)

// Entry is the fitted efficiencies of one (GPU, engine) pair and how well
// they fit.
type Entry struct {
	// GPU is the system name (h100_sxm, gb200, ...).
	GPU string `toml:"gpu"`
	// Engine is the serving engine.
	Engine Engine `toml:"engine"`
	// Efficiency is the efficiencies of package analytic's iteration
	// model (TOML keys compute, memory, comm, flat_latency, score_bytes,
	// overhead_s, sequence_overhead_s, ..., inline in the entry). In a
	// shared entry written by Calibrate only the engine terms (OverheadS,
	// LayerOverheadS, PromptOverheadS, SequenceOverheadS) are fitted; the
	// physical fields are Physics, held fixed.
	analytic.Efficiency
	// Serving is the latency the serving stack adds to the time to first
	// token outside the iterations (TOML keys request_overhead_s,
	// wait_iterations, inline in the entry).
	Serving
	// GPUs, for a shared entry (GPU SharedGPU), are the GPUs whose rows
	// it was fitted on: their predictions are calibrated, any other GPU's
	// spec-only (its physics from its spec sheet, the engine terms
	// carried over).
	GPUs []string `toml:"gpus,omitempty"`
	// Rows is the number of rows fitted.
	Rows int `toml:"rows"`
	// MAPETTFT and MAPETPOT are the in-sample mean absolute percentage
	// errors of the fitted rows (percent).
	MAPETTFT float64 `toml:"mape_ttft"`
	MAPETPOT float64 `toml:"mape_tpot"`
	// HeldOutTTFT and HeldOutTPOT, for a shared entry, are the median over
	// the engine's cells (GPU, model, mode) of the per-cell MAPE (percent)
	// when each GPU is left out of the fit in turn and its runs are
	// predicted with the shared efficiencies fitted on the others, scaled
	// to its spec sheet (CrossValidate by "gpu", SetHeldOut): the error
	// that goes with a GPU the calibration has no runs of. Zero when not
	// measured, and for a (GPU, engine) entry.
	HeldOutTTFT float64 `toml:"heldout_mape_ttft,omitzero"`
	HeldOutTPOT float64 `toml:"heldout_mape_tpot,omitzero"`
	// FromProfile marks an entry fitted on profiled iteration times
	// (CalibrateProfile) rather than measured serving runs: Rows counts
	// iterations and the MAPEs are of prompt and decode iterations.
	FromProfile bool `toml:"from_profile"`
}

// Serving is the part of the time to first token that the engine's
// iterations do not explain: a fixed per-request latency (HTTP front end,
// tokenisation, routing, streaming of the first token) and a number of
// iterations a new request waits before its prompt is scheduled (the
// scheduler admits requests between iterations, and the front end and
// engine hand requests over asynchronously, so a request typically waits
// out the running iteration and more). TTFT = RequestOverheadS +
// WaitIterations × the mean iteration time the request sees (its TPOT) +
// the simulated queueing and prompt iterations. It is not part of the
// iteration model (analytic.Model); a simulator adds it to every TTFT.
type Serving struct {
	// RequestOverheadS is the fixed latency in seconds, in [0, 10].
	RequestOverheadS float64 `toml:"request_overhead_s"`
	// WaitIterations is the iterations waited before admission, in
	// [0, 100].
	WaitIterations float64 `toml:"wait_iterations"`
	// ClientOverheadS is seconds of TTFT per concurrent client of the
	// rank, in [0, 1]: front-end work (detokenising and streaming the
	// other clients' tokens) queued ahead of a new request.
	ClientOverheadS float64 `toml:"client_overhead_s"`
	// PromptTokenS is seconds of TTFT per prompt token, in [0, 1e-3]:
	// the front end's work on a prompt before the engine sees it
	// (tokenising its text, checking and copying its tokens), which
	// grows with its length and does not run on the GPU.
	PromptTokenS float64 `toml:"prompt_token_s"`
}

// DefaultServing is the serving latency assumed when nothing is
// calibrated: 20 ms, one iteration and 0.1 ms per client.
var DefaultServing = Serving{RequestOverheadS: 0.02, WaitIterations: 1, ClientOverheadS: 1e-4, PromptTokenS: 1e-6}

// Validate checks the serving terms are finite and within their ranges.
func (s Serving) Validate() error {
	if !(s.RequestOverheadS >= 0 && s.RequestOverheadS <= 10) {
		return fmt.Errorf("request_overhead_s = %v: expected seconds in [0, 10]", s.RequestOverheadS)
	}
	if !(s.ClientOverheadS >= 0 && s.ClientOverheadS <= 1) {
		return fmt.Errorf("client_overhead_s = %v: expected seconds in [0, 1]", s.ClientOverheadS)
	}
	if !(s.PromptTokenS >= 0 && s.PromptTokenS <= 1e-3) {
		return fmt.Errorf("prompt_token_s = %v: expected seconds per prompt token in [0, 0.001]", s.PromptTokenS)
	}
	if !(s.WaitIterations >= 0 && s.WaitIterations <= 100) {
		return fmt.Errorf("wait_iterations = %v: expected a number of iterations in [0, 100]", s.WaitIterations)
	}
	return nil
}

// Calibration is a set of fitted (GPU, engine) efficiencies, sorted by GPU
// then engine, and the host-speed factors of the GPU generations. It
// encodes to TOML as [[calibration]] and [[host_speed]] tables.
type Calibration struct {
	Entries []Entry `toml:"calibration"`
	// Hosts are the fitted host-speed factors, one per GPU generation
	// with rows (Generation), sorted by generation; a generation without
	// one has factor 1 (the Hopper hosts' speed, the reference).
	Hosts []HostSpeed `toml:"host_speed,omitempty"`
}

// HostSpeed is one GPU generation's host-speed factor: the engine's
// host-side times (per iteration, per layer, per prompt, per sequence,
// per request and per client) on that generation's machines are the
// shared entry's times × Factor. The machines of a generation share a
// CPU and software era, not a GPU's physics: the GPU's work is priced by
// its spec sheet alone.
type HostSpeed struct {
	// Generation is the GPU generation (Generation: ampere, hopper,
	// blackwell, ...).
	Generation string `toml:"generation"`
	// Factor multiplies the host-side times, in [minHostFactor,
	// maxHostFactor]; 1 for hopper, the reference.
	Factor float64 `toml:"factor"`
	// Rows is the number of rows of that generation fitted.
	Rows int `toml:"rows"`
}

// Bounds of a host-speed factor.
const minHostFactor, maxHostFactor = 0.25, 4.0

// Generation returns the generation of a GPU by its name (h100_sxm,
// gb200, ...): ampere, ada, hopper, blackwell or cdna3; "" for a GPU it
// does not know (hw.Generation).
func Generation(gpu string) string { return hw.Generation(gpu) }

// HostFactor returns the host-speed factor of gpu's generation (1 when
// the calibration has none for it).
func (c Calibration) HostFactor(gpu string) float64 {
	gen := Generation(gpu)
	for _, h := range c.Hosts {
		if h.Generation == gen && gen != "" {
			return h.Factor
		}
	}
	return 1
}

// hostScaled returns e and sv with their host-side times × h.
func hostScaled(e analytic.Efficiency, sv Serving, h float64) (analytic.Efficiency, Serving) {
	e.OverheadS *= h
	e.LayerOverheadS *= h
	e.PromptOverheadS *= h
	e.SequenceOverheadS *= h
	sv.RequestOverheadS *= h
	sv.ClientOverheadS *= h
	sv.PromptTokenS *= h
	return e, sv
}

// Validate checks every entry: a known engine, efficiencies in (0, 1], a
// non-negative overhead, finite non-negative MAPEs and row counts, and no
// (GPU, engine) pair twice.
func (c Calibration) Validate() error {
	seen := map[[2]string]bool{}
	for i, e := range c.Entries {
		where := fmt.Sprintf("calibration entry %d (%s/%s)", i+1, e.GPU, e.Engine)
		if e.GPU == "" {
			return fmt.Errorf("measured: %s: field gpu: expected a GPU name", where)
		}
		if _, err := e.Engine.MarshalText(); err != nil {
			return fmt.Errorf("measured: %s: field engine: %w", where, err)
		}
		if err := e.Efficiency.Validate(); err != nil {
			return fmt.Errorf("measured: %s: %w", where, err)
		}
		if err := e.Serving.Validate(); err != nil {
			return fmt.Errorf("measured: %s: %w", where, err)
		}
		for _, f := range []struct {
			key string
			v   float64
		}{{"mape_ttft", e.MAPETTFT}, {"mape_tpot", e.MAPETPOT}, {"heldout_mape_ttft", e.HeldOutTTFT}, {"heldout_mape_tpot", e.HeldOutTPOT}} {
			if !(f.v >= 0 && f.v < math.Inf(1)) {
				return fmt.Errorf("measured: %s: field %s = %v: expected a percentage, 0 or more", where, f.key, f.v)
			}
		}
		if e.Rows < 0 {
			return fmt.Errorf("measured: %s: field rows = %d: expected a count, 0 or more", where, e.Rows)
		}
		k := [2]string{e.GPU, e.Engine.String()}
		if seen[k] {
			return fmt.Errorf("measured: %s: duplicate (gpu, engine) pair", where)
		}
		seen[k] = true
	}
	gens := map[string]bool{}
	for i, h := range c.Hosts {
		where := fmt.Sprintf("host_speed entry %d (%s)", i+1, h.Generation)
		if h.Generation == "" || gens[h.Generation] {
			return fmt.Errorf("measured: %s: field generation: expected a generation named once", where)
		}
		gens[h.Generation] = true
		if !(h.Factor >= minHostFactor && h.Factor <= maxHostFactor) {
			return fmt.Errorf("measured: %s: field factor = %v: expected a number in [%v, %v]", where, h.Factor, minHostFactor, maxHostFactor)
		}
		if h.Rows < 0 {
			return fmt.Errorf("measured: %s: field rows = %d: expected a count, 0 or more", where, h.Rows)
		}
	}
	return nil
}

// sort orders the entries by GPU then engine.
func (c *Calibration) sort() {
	slices.SortFunc(c.Entries, func(a, b Entry) int {
		if d := strings.Compare(a.GPU, b.GPU); d != 0 {
			return d
		}
		return int(a.Engine) - int(b.Engine)
	})
	slices.SortFunc(c.Hosts, func(a, b HostSpeed) int { return strings.Compare(a.Generation, b.Generation) })
}

// WriteTOML writes the calibration as [[calibration]] tables.
func (c Calibration) WriteTOML(w io.Writer) error {
	cc := Calibration{Entries: slices.Clone(c.Entries), Hosts: slices.Clone(c.Hosts)}
	cc.sort()
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(cc); err != nil {
		return fmt.Errorf("measured: encoding calibration: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// ReadTOML reads a calibration written by WriteTOML; unknown keys and
// invalid values are errors naming the file.
func ReadTOML(r io.Reader, name string) (Calibration, error) {
	var c Calibration
	md, err := toml.NewDecoder(r).Decode(&c)
	if err != nil {
		return Calibration{}, fmt.Errorf("measured: %s: %w", name, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return Calibration{}, fmt.Errorf("measured: %s: unknown key %q (expected gpu, engine, kernels, compute, expert_compute, memory, comm, flat_latency, comm_large, large_message_mib, score_bytes, overhead_s, layer_overhead_s, prompt_overhead_s, sequence_overhead_s, request_overhead_s, wait_iterations, client_overhead_s, gpus, rows, mape_ttft, mape_tpot, heldout_mape_ttft, heldout_mape_tpot, from_profile; host_speed: generation, factor, rows)", name, und[0].String())
	}
	if err := c.Validate(); err != nil {
		return Calibration{}, fmt.Errorf("%s: %w", name, err)
	}
	c.sort()
	return c, nil
}

// Provenance values of Lookup.
const (
	// Calibrated means the (GPU, engine) pair was fitted on measured rows.
	Calibrated = "calibrated"
	// SpecOnly prefixes the provenance of a pair with no fit of its own.
	SpecOnly = "spec-only"
)

// SharedGPU is the GPU name of an engine's shared entry: the efficiencies
// and serving terms fitted on all that engine's rows together, used for a
// GPU without an entry of its own.
const SharedGPU = "*"

// specDistance is the distance between two GPUs' spec sheets used by the
// nearest-relative rule: the Euclidean norm of the log ratios of memory
// bandwidth and of dense FP8 tensor throughput (BF16 when a GPU has no FP8
// figure). A GPU without a spec sheet is infinitely far from everything.
func specDistance(a, b string) float64 {
	ga, erra := hw.Lookup(a)
	gb, errb := hw.Lookup(b)
	if erra != nil || errb != nil {
		return math.Inf(1)
	}
	flops := func(g hw.GPU) float64 { return g.PeakFLOPs(arch.FP8) }
	dbw := math.Log(ga.MemoryBWTBs / gb.MemoryBWTBs)
	dfl := math.Log(flops(ga) / flops(gb))
	return math.Hypot(dbw, dfl)
}

// Lookup returns the efficiencies for a GPU and engine and where they come
// from: "calibrated" when the pair has an entry of its own; otherwise the
// engine's shared entry (GPU SharedGPU), its host-side times × the GPU
// generation's host factor (HostFactor), with provenance "calibrated"
// when the GPU's rows were among those fitted (Entry.GPUs), else
// "spec-only (shared vllm engine terms, physics from its spec sheet)";
// without a shared entry for the
// engine, the efficiencies of the nearest calibrated relative (smallest
// specDistance, among the same engine's entries when there are any, ties
// broken by GPU name), with provenance "spec-only (efficiencies of
// h100_sxm/vllm)", its GPU-side fixed costs carried to the GPU
// (analytic.Efficiency.CarriedTo); with no entries at all, the analytic default and
// "spec-only (analytic defaults)".
func (c Calibration) Lookup(gpu string, engine Engine) (analytic.Efficiency, string) {
	e, prov := c.LookupEntry(gpu, engine)
	return e.Efficiency, prov
}

// LookupEntry is Lookup returning the whole entry (efficiencies and
// serving latency) chosen by the same rule; with no entries, the analytic
// default efficiencies and DefaultServing.
func (c Calibration) LookupEntry(gpu string, engine Engine) (Entry, string) {
	for _, e := range c.Entries {
		if e.GPU == gpu && e.Engine == engine {
			return e, Calibrated
		}
	}
	for _, e := range c.Entries {
		if e.GPU == SharedGPU && e.Engine == engine {
			fitted := slices.Contains(e.GPUs, gpu)
			e.Efficiency, e.Serving = hostScaled(e.Efficiency, e.Serving, c.HostFactor(gpu))
			if fitted {
				return e, Calibrated
			}
			return e, fmt.Sprintf("%s (shared %s engine terms, physics from its spec sheet)", SpecOnly, engine)
		}
	}
	best, bestD := -1, math.Inf(1)
	for pass := 0; pass < 2 && best < 0; pass++ {
		for i, e := range c.Entries {
			if (pass == 0 && e.Engine != engine) || e.GPU == SharedGPU {
				continue
			}
			d := specDistance(gpu, e.GPU)
			if best < 0 || d < bestD || (d == bestD && e.GPU < c.Entries[best].GPU) {
				best, bestD = i, d
			}
		}
	}
	if best < 0 {
		return Entry{GPU: gpu, Engine: engine, Efficiency: analytic.DefaultEfficiency, Serving: DefaultServing}, SpecOnly + " (analytic defaults)"
	}
	e := c.Entries[best]
	from, errF := hw.Lookup(e.GPU)
	to, errT := hw.Lookup(gpu)
	if errF == nil && errT == nil {
		e.Efficiency = e.Efficiency.CarriedTo(from, to)
	}
	return e, fmt.Sprintf("%s (efficiencies of %s/%s)", SpecOnly, e.GPU, e.Engine)
}

// SetHeldOut sets each shared entry's HeldOutTTFT and HeldOutTPOT from
// cells, the per-cell MAPEs of a leave-one-GPU-out cross-validation
// (CrossValidate(rows, "gpu")): the median over that engine's cells
// (MedianCellMAPEByEngine), rounded to 0.1%. An engine without cells
// keeps zeros.
func (c *Calibration) SetHeldOut(cells []CellMAPE) {
	byEngine := MedianCellMAPEByEngine(cells)
	for i := range c.Entries {
		e := &c.Entries[i]
		if e.GPU != SharedGPU {
			continue
		}
		e.HeldOutTTFT, e.HeldOutTPOT = 0, 0
		for _, m := range byEngine {
			if m.Engine == e.Engine {
				e.HeldOutTTFT, e.HeldOutTPOT = math.Round(m.TTFT*10)/10, math.Round(m.TPOT*10)/10
			}
		}
	}
}

// HeldOut returns the held-out figures of engine's shared entry
// (SetHeldOut) and whether it has them.
func (c Calibration) HeldOut(engine Engine) (ttft, tpot float64, ok bool) {
	for _, e := range c.Entries {
		if e.GPU == SharedGPU && e.Engine == engine && e.HeldOutTTFT > 0 && e.HeldOutTPOT > 0 {
			return e.HeldOutTTFT, e.HeldOutTPOT, true
		}
	}
	return 0, 0, false
}
