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
	// Efficiency is the fitted efficiencies of package analytic's
	// iteration model (TOML keys compute, memory, comm, score_bytes,
	// overhead_s, sequence_overhead_s, inline in the entry).
	analytic.Efficiency
	// Rows is the number of rows fitted.
	Rows int `toml:"rows"`
	// MAPETTFT and MAPETPOT are the in-sample mean absolute percentage
	// errors of the fitted rows (percent).
	MAPETTFT float64 `toml:"mape_ttft"`
	MAPETPOT float64 `toml:"mape_tpot"`
}

// Calibration is a set of fitted (GPU, engine) efficiencies, sorted by GPU
// then engine. It encodes to TOML as [[calibration]] tables.
type Calibration struct {
	Entries []Entry `toml:"calibration"`
}

// Validate checks every entry: a known engine, efficiencies in (0, 1], a
// non-negative overhead, and no (GPU, engine) pair twice.
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
		k := [2]string{e.GPU, e.Engine.String()}
		if seen[k] {
			return fmt.Errorf("measured: %s: duplicate (gpu, engine) pair", where)
		}
		seen[k] = true
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
}

// WriteTOML writes the calibration as [[calibration]] tables.
func (c Calibration) WriteTOML(w io.Writer) error {
	cc := Calibration{Entries: slices.Clone(c.Entries)}
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
		return Calibration{}, fmt.Errorf("measured: %s: unknown key %q (expected gpu, engine, compute, memory, comm, score_bytes, overhead_s, sequence_overhead_s, rows, mape_ttft, mape_tpot)", name, und[0].String())
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
// from: "calibrated" when the pair was fitted; otherwise the efficiencies
// of the nearest calibrated relative (smallest specDistance, among the
// same engine's entries when there are any, ties broken by GPU name), with
// provenance "spec-only (efficiencies of h100_sxm/vllm)"; with no entries
// at all, the analytic default and "spec-only (analytic defaults)".
func (c Calibration) Lookup(gpu string, engine Engine) (analytic.Efficiency, string) {
	for _, e := range c.Entries {
		if e.GPU == gpu && e.Engine == engine {
			return e.Efficiency, Calibrated
		}
	}
	best, bestD := -1, math.Inf(1)
	for pass := 0; pass < 2 && best < 0; pass++ {
		for i, e := range c.Entries {
			if pass == 0 && e.Engine != engine {
				continue
			}
			d := specDistance(gpu, e.GPU)
			if best < 0 || d < bestD || (d == bestD && e.GPU < c.Entries[best].GPU) {
				best, bestD = i, d
			}
		}
	}
	if best < 0 {
		return analytic.DefaultEfficiency, SpecOnly + " (analytic defaults)"
	}
	e := c.Entries[best]
	return e.Efficiency, fmt.Sprintf("%s (efficiencies of %s/%s)", SpecOnly, e.GPU, e.Engine)
}
