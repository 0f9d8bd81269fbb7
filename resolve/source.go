// Package resolve turns names into what the simulator runs: a design a
// user names, with its batching-policy suffix, into its catalog value once
// at the edge (Design), and that design, machine counts and a model of the
// catalog into a Cluster (NewCluster) whose machine
// types carry their performance models (a profiled pair,
// or the analytic model of the architecture on the GPU's spec sheet with
// a serving engine's calibration and, where a user measured it, the GPU's
// own kernel layer), the provenance of each and the power models of
// their replicas; Cluster.Sim is what the simulator (package evaluator)
// takes: counts, KV-cache capacities, links and models, no name to look
// up nor spec sheet to read. resolve imports the simulator, never the
// other way round.
package resolve

import (
	"errors"
	"fmt"
	"strings"

	"splitplan/arch"
	"splitplan/costpower"
	"splitplan/evaluator/perf"
	"splitplan/evaluator/perf/analytic"
	"splitplan/evaluator/perf/kernel"
	"splitplan/evaluator/perf/measured"
	"splitplan/hw"
	"splitplan/memory"
)

// Source resolves the performance model of a model on a machine type:
// the profiled pair when Table has one, else the analytic model of the
// model's architecture on the machine's GPU spec with the efficiencies
// Calibration holds for that GPU and Engine (or those of its nearest
// calibrated relative).
type Source struct {
	// Table holds the profiled pairs.
	Table *perf.Table
	// Calibration holds the analytic model's efficiencies per GPU and
	// serving engine.
	Calibration measured.Calibration
	// Engine is the serving engine whose calibration the analytic model
	// uses (default vllm, whose chunked mixed batching is closest to the
	// simulator's).
	Engine measured.Engine
	// ProfiledError is the held-out error of the profiled pairs, shown
	// with their provenance.
	ProfiledError string
	// Archs are architectures beyond package arch's built-ins (from a
	// Hugging Face config.json), found by name before them.
	Archs []arch.Arch
	// Physics resolves every machine type with the analytic model, those
	// with a profile too: one provenance per comparison (issue 28). ForSpace
	// sets it for a space that includes a machine type without a profile.
	Physics bool
	// Kernels are kernel layers measured on users' GPUs (perf fit
	// --kernels), by hw GPU name: the analytic model of a machine type
	// on such a GPU uses it, with perf.Measured provenance.
	Kernels map[string]KernelFit
	// Compat resolves the reference simulator's fit (--compat
	// splitwise-sim), which exists for profiled pairs only; the command
	// sets it once, from the same value as evaluator.Options.Compat.
	Compat bool
}

// KernelFit is one GPU's measured kernel layer and where it came from.
type KernelFit struct {
	Params *kernel.Params
	// Source names the fit, e.g. the TOML file perf fit --kernels wrote.
	Source string
}

// HasProfile reports whether the profiled table holds model m on machine
// type mc at its tensor parallelism.
func (s Source) HasProfile(m costpower.Model, mc costpower.Machine) bool {
	if s.Table == nil {
		return false
	}
	_, err := s.Table.Lookup(m.Name, mc.PerfHardware, mc.TensorParallel)
	return err == nil
}

// ForSpace is s for a comparison of model m over machine types machines:
// with Physics set when one of them has no profile (and Compat is off),
// so that the 2023 SplitwiseSim profiles never sit beside the analytic
// model in one answer. The profiled pairs keep serving --compat
// splitwise-sim and spaces made only of them (the paper's designs).
func (s Source) ForSpace(m costpower.Model, machines []costpower.Machine) Source {
	if s.Compat || s.Physics {
		return s
	}
	for _, mc := range machines {
		if !s.HasProfile(m, mc) {
			s.Physics = true
			return s
		}
	}
	return s
}

// lookupArch finds an architecture among s.Archs, then the built-ins.
func (s Source) lookupArch(name string) (arch.Arch, error) {
	for _, a := range s.Archs {
		if strings.EqualFold(a.Name, name) {
			return a, nil
		}
	}
	return arch.Lookup(name)
}

// WithCompat is s resolving the reference simulator's fit when on is set
// (Source.Compat): a command sets it once, from the value of its
// evaluator.Options.Compat.
func (s Source) WithCompat(on bool) Source {
	s.Compat = on
	return s
}

// DefaultSource is the built-in profiles and calibration.
func DefaultSource() Source { return NewSource(perf.Builtin()) }

// NewSource is table's profiles with the built-in calibration, for the
// vllm engine.
func NewSource(table *perf.Table) Source {
	return Source{Table: table, Calibration: measured.Default(), Engine: measured.VLLM,
		ProfiledError: perf.BuiltinHeldOutError}
}

// Resolve returns the iteration model of model m on machine type mc (the
// reference simulator's fit when Compat is set, which exists for profiled
// pairs only), with its provenance.
func (s Source) Resolve(m costpower.Model, mc costpower.Machine) (perf.IterationModel, perf.Provenance, error) {
	compat := s.Compat
	if s.Table != nil && !(s.Physics && !compat) {
		if p, err := s.Table.Lookup(m.Name, mc.PerfHardware, mc.TensorParallel); err == nil {
			if compat {
				if ProfileCap(mc, true) != capOf(mc.GPUPowerCap) {
					return nil, perf.Provenance{}, fmt.Errorf("machine type %s: a power cap other than its profile's is not modelled with --compat splitwise-sim", mc.Name)
				}
				return p.CompatModel(), perf.Provenance{Kind: perf.Profiled, Source: p.Name() + ", SplitwiseSim's fit"}, nil
			}
			return s.capped(p.Model(), perf.Provenance{Kind: perf.Profiled, Source: p.Name(), Error: s.ProfiledError}, m, mc, true)
		}
	}
	noProfile := fmt.Errorf("machine type %s: no profile of %s on %s at tp%d", mc.Name, m.Name, mc.PerfHardware, mc.TensorParallel)
	if compat {
		return nil, perf.Provenance{}, fmt.Errorf("%w, and --compat splitwise-sim needs one (the reference simulator only knows its profiles)", noProfile)
	}
	if s.Physics && s.HasProfile(m, mc) {
		noProfile = fmt.Errorf("machine type %s: the comparison includes machine types without a profile, so every machine uses the analytic model", mc.Name)
	}
	if mc.GPUSpec == "" {
		return nil, perf.Provenance{}, fmt.Errorf("%w, and the machine type has no gpu_spec for the analytic model", noProfile)
	}
	if m.Arch == "" {
		return nil, perf.Provenance{}, fmt.Errorf("%w, and the model has no architecture (arch) for the analytic model", noProfile)
	}
	a, err := s.lookupArch(m.Arch)
	if err != nil {
		return nil, perf.Provenance{}, fmt.Errorf("model %s: %w", m.Name, err)
	}
	g, err := hw.Lookup(mc.GPUSpec)
	if err != nil {
		return nil, perf.Provenance{}, fmt.Errorf("machine type %s: %w", mc.Name, err)
	}
	prec := arch.BF16
	if m.Precision != "" {
		if prec, err = arch.ParsePrecision(m.Precision); err != nil {
			return nil, perf.Provenance{}, fmt.Errorf("model %s: %w", m.Name, err)
		}
	}
	// The one memory model refuses weights the engine cannot hold (the
	// analytic model's own check is against the whole GPU).
	if _, err := m.Memory(mc.Instance()); errors.Is(err, memory.ErrNoFit) {
		return nil, perf.Provenance{}, fmt.Errorf("machine type %s: %w", mc.Name, err)
	}
	engine := s.Engine
	eff, source := s.Calibration.Lookup(g.Name, engine)
	cfg := analytic.Config{Arch: a, GPU: g, TP: mc.TensorParallel, Weights: prec, KV: prec.KVCache(), Eff: eff}
	cfg.MoE = moePath(a, prec, g, engine, eff)
	kf, own := s.Kernels[g.Name]
	own = own && kf.Params != nil && eff.Kernels
	if own {
		cfg.Kernel = kf.Params
	}
	pm, err := analytic.New(cfg)
	if err != nil {
		return nil, perf.Provenance{}, fmt.Errorf("machine type %s, model %s: %w", mc.Name, m.Name, err)
	}
	pv := perf.Provenance{Kind: perf.Calibrated, Source: fmt.Sprintf("analytic, %s/%s", g.Name, engine)}
	if strings.HasPrefix(source, measured.SpecOnly) {
		detail := strings.TrimSpace(strings.TrimPrefix(source, measured.SpecOnly))
		detail = strings.TrimSuffix(strings.TrimPrefix(detail, "("), ")")
		pv.Kind, pv.Source = perf.SpecOnly, "analytic, "+detail
	}
	pv.Error = s.calibrationError(g.Name, engine, pv.Kind)
	if own {
		pv.Kind = perf.Measured
		pv.Source += "; kernel layer measured on this GPU (" + kf.Source + ")"
	}
	pv.Source += cfg.MoE.Source()
	return s.capped(pm, pv, m, mc, false)
}

// calibrationError is the error figure that goes with a calibrated pair:
// the fit's in-sample MAPE on that GPU's measured rows (the held-out
// figures are perf validate --measured --cross-validate's); with a GPU
// the calibration has no runs of, predicted with the engine's shared
// efficiencies, the held-out error of GPUs left out of the fit.
func (s Source) calibrationError(gpu string, engine measured.Engine, kind perf.ProvenanceKind) string {
	if kind != perf.Calibrated {
		if t, p, ok := s.Calibration.HeldOut(engine); ok {
			return fmt.Sprintf("uncalibrated GPU: held-out MAPE %.0f%% TTFT, %.0f%% TPOT, the median per cell with each GPU left out of the %s fit", t, p, engine)
		}
		return "uncalibrated GPU: held-out error on GPUs left out of the fit in docs/model.md"
	}
	for _, e := range s.Calibration.Entries {
		if e.GPU == gpu && e.Engine == engine {
			if e.FromProfile {
				return fmt.Sprintf("fitted on profiled iterations, in-sample MAPE %.0f%% prompt, %.0f%% decode", e.MAPETTFT, e.MAPETPOT)
			}
			return fmt.Sprintf("in-sample MAPE %.0f%% TTFT, %.0f%% TPOT on %d measured runs", e.MAPETTFT, e.MAPETPOT, e.Rows)
		}
	}
	// A GPU among those the engine's shared entry was fitted on.
	for _, e := range s.Calibration.Entries {
		if e.GPU == measured.SharedGPU && e.Engine == engine {
			return fmt.Sprintf("in-sample MAPE %.0f%% TTFT, %.0f%% TPOT on the %d measured %s runs of %d GPUs (engine terms shared by every GPU)", e.MAPETTFT, e.MAPETPOT, e.Rows, engine, len(e.GPUs))
		}
	}
	return ""
}

// moePath is how the engine runs a's routed experts of weights prec on g
// (kernel.EnginePath), under the kernel physics; none for a dense model or
// the old roofline.
func moePath(a arch.Arch, prec arch.Precision, g hw.GPU, engine measured.Engine, eff analytic.Efficiency) kernel.MoEPath {
	if !eff.Kernels {
		return kernel.MoEPath{}
	}
	return kernel.EnginePath(engine.String(), a, prec, g, kernel.Switches{})
}
