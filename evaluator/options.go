package evaluator

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"splitplan/evaluator/perf"
	"splitplan/evaluator/perf/power"
)

// TransferMode is how the KV-cache moves from a prompt machine to a token
// machine.
type TransferMode int

// Transfer modes.
const (
	// TransferAuto uses the layer-wise overlapped transfer for prompts of
	// LayerwiseMinPromptTokens or more (a constant visible cost per link)
	// and a serialized one (size / bandwidth) for smaller prompts. The
	// default.
	TransferAuto TransferMode = iota
	// TransferSerialized always moves the whole KV-cache after the prompt
	// iteration: size / link bandwidth.
	TransferSerialized
	// TransferLayerwise always uses the layer-wise transfer's constant cost.
	TransferLayerwise
)

var transferNames = [...]string{TransferAuto: "auto", TransferSerialized: "serialized", TransferLayerwise: "layerwise"}

// String is the mode's name: auto, serialized or layerwise.
func (t TransferMode) String() string { return enumName(transferNames[:], int(t), "TransferMode") }

// MarshalText encodes the mode's name.
func (t TransferMode) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText parses a mode's name (see ParseTransferMode).
func (t *TransferMode) UnmarshalText(b []byte) error {
	m, err := ParseTransferMode(string(b))
	if err != nil {
		return err
	}
	*t = m
	return nil
}

// ParseTransferMode reads auto, serialized or layerwise (case ignored).
func ParseTransferMode(s string) (TransferMode, error) {
	i, err := parseEnum(transferNames[:], s, "transfer mode")
	if err != nil {
		return 0, fmt.Errorf("transfer mode must be auto, serialized or layerwise, got %q", s)
	}
	return TransferMode(i), nil
}

// Options are the knobs of a simulation. The zero value of a field means
// its default (given in the field's comment); DefaultOptions spells them out.
type Options struct {
	// Compat reproduces the reference simulator (SplitwiseSim): the
	// caller passes compat performance models, the KV-cache is sized
	// without grouped-query attention, and KV transfers are serialized at
	// CompatBandwidthBytesPerS.
	Compat bool
	// Transfer is the KV transfer mode outside compat mode: TransferAuto
	// (default), TransferSerialized or TransferLayerwise.
	Transfer TransferMode
	// MaxBatchRequests caps the requests in one batch (default 512).
	MaxBatchRequests int
	// MaxBatchTokens caps the tokens of one iteration, a decode counting
	// 1 and a prompt its length (default 2048). The first prompt of a
	// batch is taken whatever its length.
	MaxBatchTokens int
	// MaxPreemptions is how often a request may be left out of a batch
	// before it gets priority (default 4).
	MaxPreemptions int
	// PromptQueueTokens is the cluster scheduler's threshold: a prompt
	// machine with a non-empty queue is refused when its pending tokens
	// plus the new prompt exceed it (default 8192).
	PromptQueueTokens int
	// LayerwiseMinPromptTokens is the smallest prompt that uses the
	// layer-wise transfer in TransferAuto mode (default 512).
	LayerwiseMinPromptTokens int
	// CompatBandwidthBytesPerS is the transfer bandwidth of compat mode
	// (default 200 GiB/s).
	CompatBandwidthBytesPerS float64
	// KVCapacityTokens, when positive, overrides every machine's KV-cache
	// capacity in tokens (for what-if and stress runs).
	KVCapacityTokens int64
	// AbortDelayS, when positive, stops the simulation as soon as a
	// request has waited longer than this for its prompt or its decode to
	// start: the load is then not sustainable, and the rest of the run
	// would only cost time. Zero runs every simulation to the end.
	AbortDelayS float64
	// Scaling, when not nil, changes which machines serve over the run
	// (scale.go): the cluster's counts are the most that may serve.
	Scaling *Scaling
	// Progress, when set, is called every few thousand events with the
	// simulated time reached (seconds from the first arrival's origin),
	// from the goroutine running the simulation: a long run's caller
	// shows it. It must be cheap and must not touch the simulation.
	Progress func(simulatedS float64)
	// Stop, when set, stops the simulation as soon as its failure of one
	// of its latency limits is certain (see Stop): Result.Stopped and
	// StopReason then say so, and the requests unfinished have zero
	// results. Searches set it; nil runs every simulation to the end.
	// The compat scheduler (Compat) ignores it.
	Stop *Stop
	// RecordBatchTokens fills MachineResult.BatchTokens, each machine's
	// busy time by batched-token count (what `plot cdf` draws). Off by
	// default: it is most of what a simulation would allocate, and only
	// that figure reads it.
	RecordBatchTokens bool
	// Energy fills the energy figures (Result.EnergyKnown, EnergyJ and
	// each machine's EnergyJ and IdleEnergyJ) from the cluster's power
	// models. Off by default: the power model, evaluated at every run end,
	// is a tenth or more of a simulation's time, and only what prints or
	// weighs energy reads it (the simulate and sweep outputs, the energy
	// and TCO goals, the drawn power budget; a search fills the energy of
	// the points it reports by simulating them again with it).
	Energy bool
	// LatenciesOnly keeps of each request only what the SLO check reads
	// (Result.Latencies, 48 bytes a request) instead of its full
	// RequestResult (Result.Requests stays nil): for searches, and for
	// runs of millions of requests.
	LatenciesOnly bool
	// Latencies, with LatenciesOnly, is room the simulation may take for
	// Result.Latencies, cleared first, when it holds every request: a
	// caller that reads a result and drops it (a search's verdict) hands
	// the next simulation the last one's instead of a fresh allocation
	// that the run clears and faults in.
	Latencies []RequestLatency
	// NoITL leaves every gap out of Result.ITL, which stays empty, for a
	// caller that reads no ITL (a search whose SLO has no ITL target): it
	// is a twentieth of a search's simulation. The requests' own gaps
	// (their TBT, their largest gap) are kept.
	NoITL bool
	// Streamed keeps no record a request: Result.Summary streams every
	// latency into sketches (quantiles within 0.78%, means and maxima
	// exact) and counts the rest, so memory does not grow with the
	// requests (simulate of millions). It overrides LatenciesOnly; the
	// SLO check needs the per-request records and refuses such a result.
	Streamed bool

	// formEveryBatch (tests) forms every batch with the policy's form,
	// leaving out the run end's shortcuts (decodesJoin, promptsJoin),
	// which must give the same simulation.
	formEveryBatch bool
	// indexFrom (tests), when positive, replaces indexMin: pools of this
	// many machines or more are indexed (1: every pool; a large number:
	// none), which must give the same simulation.
	indexFrom int
}

// DefaultOptions returns the options with every default filled in.
func DefaultOptions() Options {
	return Options{}.withDefaults()
}

func (o Options) withDefaults() Options {
	if o.MaxBatchRequests == 0 {
		o.MaxBatchRequests = 512
	}
	if o.MaxBatchTokens == 0 {
		o.MaxBatchTokens = 2048
	}
	if o.MaxPreemptions == 0 {
		o.MaxPreemptions = 4
	}
	if o.PromptQueueTokens == 0 {
		o.PromptQueueTokens = 8192
	}
	if o.LayerwiseMinPromptTokens == 0 {
		o.LayerwiseMinPromptTokens = 512
	}
	if o.CompatBandwidthBytesPerS == 0 {
		o.CompatBandwidthBytesPerS = 200 << 30 // 200 GiB/s
	}
	return o
}

func (o Options) validate() error {
	if o.Transfer < 0 || int(o.Transfer) >= len(transferNames) {
		return fmt.Errorf("unknown transfer mode %d", int(o.Transfer))
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"max batch requests", o.MaxBatchRequests}, {"max batch tokens", o.MaxBatchTokens},
		{"max preemptions", o.MaxPreemptions}, {"prompt queue tokens", o.PromptQueueTokens},
		{"layer-wise minimum prompt tokens", o.LayerwiseMinPromptTokens}} {
		if f.v < 1 {
			return fmt.Errorf("%s must be at least 1, got %d", f.name, f.v)
		}
	}
	if !(o.CompatBandwidthBytesPerS > 0) || math.IsInf(o.CompatBandwidthBytesPerS, 0) {
		return fmt.Errorf("compat bandwidth must be a positive number of bytes per second, got %v", o.CompatBandwidthBytesPerS)
	}
	if o.AbortDelayS < 0 || math.IsNaN(o.AbortDelayS) {
		return fmt.Errorf("abort delay must be zero (off) or positive seconds, got %v", o.AbortDelayS)
	}
	if o.KVCapacityTokens < 0 {
		return fmt.Errorf("KV capacity override must not be negative, got %d", o.KVCapacityTokens)
	}
	return nil
}

// Cluster is what Evaluate simulates: Prompt machines of PromptType and
// Token machines of TokenType (a baseline: Prompt machines of PromptType,
// each running both phases, and no token machine), each machine one model
// replica, serving one model under one batching policy. It holds only
// what the simulation reads: package resolve makes one from a design, a
// catalog and a model (resolve.Cluster.Sim), so the simulator never looks
// a name up nor reads a spec sheet.
type Cluster struct {
	// Name names the cluster's design in errors, e.g. "Splitwise-HH".
	Name string
	// Baseline reports a co-located design: every machine runs both
	// phases, and Token is 0.
	Baseline bool
	// PromptType is the prompt machines' type (for a baseline, every
	// machine's); TokenType the token machines' (for a baseline, the same).
	PromptType, TokenType MachineType
	// Prompt is the number of prompt machines (for a baseline, of
	// machines); Token the number of token machines.
	Prompt, Token int
	// Links[a][b] is the link from a machine of one type to a machine of
	// another (index 0: PromptType, 1: TokenType) for the KV-cache
	// transfers; in compat mode every link has
	// Options.CompatBandwidthBytesPerS instead of its bandwidth.
	Links [2][2]Link
	// KVBytesPerToken is the KV-cache of one token in bytes, as the
	// machine types' KVCapacityBytes count it.
	KVBytesPerToken int64
	// Compat reports that the performance models and the KV-cache sizes
	// are the reference simulator's (SplitwiseSim): Options.Compat must
	// say the same.
	Compat bool
	// Policy is the batching policy of the cluster's baseline and
	// mixed-pool machines (the zero value: mixed batching).
	Policy Policy
}

// String names the cluster as it is simulated, its counts being
// machines as the simulator runs them (model replicas), e.g.
// "Splitwise-HH 35P/5T" or "Baseline-H100 ×40".
func (c Cluster) String() string {
	if c.Baseline {
		return fmt.Sprintf("%s ×%d", c.Name, c.Prompt)
	}
	return fmt.Sprintf("%s %dP/%dT", c.Name, c.Prompt, c.Token)
}

// MachineType is one machine type of a Cluster as the simulator sees it:
// one model replica's KV-cache, performance model and power model.
type MachineType struct {
	// Name names the type in results and errors, e.g. "DGX-H100".
	Name string
	// KVCapacityBytes is the KV-cache one machine holds, in bytes
	// (Cluster.KVBytesPerToken a token).
	KVCapacityBytes int64
	// Unfit, when not nil, says why a machine of the type cannot hold
	// the model with any KV-cache: Evaluate returns it, unless
	// Options.KVCapacityTokens sets the capacity.
	Unfit error
	// Perf is the type's performance model.
	Perf perf.IterationModel
	// Provenance says where Perf's numbers come from.
	Provenance perf.Provenance
	// Power is the power model of one machine (one model replica), for
	// the energy figures (nil: the result has no energy).
	Power *power.Model
}

// Link is the network link between two machines: its bandwidth and the
// visible cost of a layer-wise (overlapped) KV-cache transfer over it.
type Link struct {
	// BytesPerS is the bandwidth in bytes per second.
	BytesPerS float64
	// LayerwiseS is the layer-wise transfer's cost in seconds.
	LayerwiseS float64
}

// ParseCompat maps a --compat value to the Compat option: "" or "none" is
// splitplan's own model, "splitwise-sim" the reference simulator's.
func ParseCompat(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "", "none", "splitplan":
		return false, nil
	case "splitwise-sim", "splitwisesim":
		return true, nil
	}
	return false, fmt.Errorf("unknown compatibility mode %q (want splitwise-sim or none)", s)
}

// ErrNoRequests is the error of a simulation given no requests (a rate
// and duration too small to draw one).
var ErrNoRequests = errors.New("the workload has no requests")
