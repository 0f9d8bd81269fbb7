package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"splitplan/evaluator"
	"splitplan/search"
	"splitplan/traces"
)

// workloadFlags are the flags that choose the requests a command simulates.
func workloadFlags(defaultRPS float64) []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "workload", Value: defaultWorkload, Usage: "built-in size distribution: " + strings.Join(traces.BuiltinNames(), " or ")},
		&cli.StringFlag{Name: "trace", Usage: "trace `FILE` (Azure or SplitwiseSim CSV): replayed as is, or its sizes resampled at --rps when --rps is given"},
		&cli.Float64Flag{Name: "rps", Value: defaultRPS, Usage: "arrival rate in requests per second (Poisson)"},
		&cli.StringFlag{Name: "duration", Value: defaultDuration, Usage: "length of the synthesized workload: a Go duration (120s, 2m) or seconds"},
		&cli.Uint64Flag{Name: "seed", Usage: "random seed of the synthesized workload"},
	}, arrivalFlags()...)
}

// arrivalFlags are the flags that shape arrivals beyond a constant rate.
func arrivalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "rate-profile", Usage: "a rate that varies over time, repeating: a CSV `PROFILE` of time_s,rps rows (see --rate-interpolation), diurnal:peak=RPS,trough=RPS,period=DURATION[,phase=DURATION] (a cosine, at its peak at phase), or trace[:bin=DURATION] (the --trace file's own arrivals per bin, 1h by default); arrivals are a non-homogeneous Poisson process, --rps (default: the profile's mean) scales the profile to that mean rate, --duration defaults to one period"},
		&cli.StringFlag{Name: "rate-interpolation", Value: "steps", Usage: "a CSV --rate-profile's rates: steps (each holds until the next row; the last as long as the one before) or linear (between rows; the last row ends the period)"},
		&cli.Float64Flag{Name: "burstiness", Value: 1, Usage: "coefficient of variation of the gaps between arrivals (gamma distributed): 1 is Poisson, above 1 burstier"},
	}
}

// workload is a command's requests and where they came from.
type workload struct {
	Requests []traces.Request
	// Source describes the workload in one line.
	Source string
	// File is the trace file the requests were read from as is ("" when
	// synthesized): request i is on line i+2.
	File string
	// Varying reports arrivals at a rate that varies over the run (a rate
	// profile).
	Varying bool
}

// loadWorkload builds the requests chosen by the workload flags. With
// independent set (reference compat mode) synthesized sizes are drawn
// independently, as the reference simulator's generator does.
func loadWorkload(c *cli.Context, independent bool) (*workload, error) {
	wc := workloadConfigOf(c)
	arr, durS, err := wc.timing()
	if err != nil {
		return nil, err
	}
	rps, _ := wc.rate(arr)
	if wc.RPSGiven || wc.Trace == "" {
		if err := checkRate(rps); err != nil {
			return nil, err
		}
	}
	path := wc.Trace
	if path != "" && !wc.RPSGiven && arr.Profile == nil && !isSet(c, "burstiness") {
		// Replayed as is: the trace's size distribution is not needed.
		reqs, err := wc.traceRequests()
		if err != nil {
			return nil, err
		}
		if wc.DurationGiven {
			n := 0
			for n < len(reqs) && reqs[n].Arrival < durS {
				n++
			}
			reqs = reqs[:n]
		}
		if len(reqs) == 0 {
			return nil, badInputf("%s: no requests within --duration %s", path, wc.Duration)
		}
		return &workload{Requests: reqs, File: path,
			Source: fmt.Sprintf("%s replayed (%d requests)", path, len(reqs))}, nil
	}
	sizes, _, err := wc.sizes()
	if err != nil {
		return nil, err
	}
	out, _, err := traces.SynthesizeArrivals(c.Context, sizes, rps, durS, wc.Seed, independent, false, arr, nil)
	if c.Context.Err() != nil {
		return nil, c.Context.Err() // interrupted
	}
	if err != nil {
		return nil, badInput(err)
	}
	if len(out) == 0 {
		return nil, badInputf("--rps %g over --duration %s gives no requests: raise either", rps, wc.Duration)
	}
	if path != "" {
		return &workload{Requests: out, Varying: arr.Profile != nil, Source: fmt.Sprintf("sizes of %s at %s for %gs, seed %d", path, arr.Describe(rps), durS, wc.Seed)}, nil
	}
	return &workload{Requests: out, Varying: arr.Profile != nil, Source: fmt.Sprintf("%s at %s for %gs, seed %d (%d requests)", sizes.Name(), arr.Describe(rps), durS, wc.Seed, len(out))}, nil
}

// profileMean is a profile's mean rate to 12 significant digits (a
// tabulated profile's sum of pieces is off in the last bits).
func profileMean(p *traces.Profile) float64 {
	m, _ := strconv.ParseFloat(strconv.FormatFloat(p.Mean(), 'g', 12, 64), 64)
	return m
}

// arrivals builds the arrivals' shape the workload configuration asks
// for: its rate profile and burstiness (the zero value without them).
func (wc workloadConfig) arrivals() (traces.Arrivals, error) {
	arr := traces.Arrivals{BurstCV: wc.Burstiness}
	if err := traces.CheckBurstCV(wc.Burstiness); err != nil {
		return arr, badInputf("--burstiness: %v", err)
	}
	if wc.Interpolation == "" {
		wc.Interpolation = "steps"
	}
	if wc.Interpolation != "steps" && wc.Interpolation != "linear" {
		return arr, badInputf("--rate-interpolation must be steps or linear, got %q", wc.Interpolation)
	}
	spec := wc.RateProfile
	var err error
	switch {
	case spec == "":
		if wc.InterpolationGiven {
			return arr, badInputf("--rate-interpolation goes with a CSV --rate-profile")
		}
	case strings.HasPrefix(spec, "diurnal:"):
		if arr.Profile, err = traces.ParseDiurnal(spec); err != nil {
			return arr, badInputf("--rate-profile %v", err)
		}
	case traces.IsProfileSpec(spec):
		bin, err := traces.ParseTraceProfileSpec(spec)
		if err != nil {
			return arr, badInputf("--rate-profile %v", err)
		}
		if wc.Trace == "" {
			return arr, badInputf("--rate-profile %s takes its rates from the arrivals of --trace FILE: give one", spec)
		}
		reqs, err := wc.traceRequests()
		if err != nil {
			return arr, err
		}
		if arr.Profile, err = traces.ProfileFromArrivals(wc.Trace, reqs, bin); err != nil {
			return arr, badInputf("--rate-profile %s: %v", spec, err)
		}
	default:
		if arr.Profile, err = traces.ReadProfileFile(spec, wc.Interpolation == "linear"); err != nil {
			return arr, badInputf("--rate-profile: %v", err)
		}
	}
	return arr, nil
}

// timing is the workload's arrivals and its length in seconds.
func (wc workloadConfig) timing() (traces.Arrivals, float64, error) {
	arr, err := wc.arrivals()
	if err != nil {
		return arr, 0, err
	}
	durS, err := wc.durationS(arr)
	return arr, durS, err
}

// durationS is the workload's --duration in seconds; with a rate profile
// and no --duration, one period of the profile.
func (wc workloadConfig) durationS(arr traces.Arrivals) (float64, error) {
	if arr.Profile != nil && !wc.DurationGiven {
		return arr.Profile.SpanS(), nil
	}
	return traceParseDuration(wc.Duration)
}

// workloadConfig is the workload part of a configuration (a plan's
// [workload] table): what chooses a workload's requests — a built-in size
// distribution or a trace file, the rate, the length, the seed and the
// arrivals' shape. Every command reads it with readFlags, the one reader
// of these flags (workloadConfigOf; optimize's configuration embeds it).
type workloadConfig struct {
	Workload, Trace string
	// WorkloadGiven and TraceGiven report which of the two was given
	// (the defaults name a built-in workload).
	WorkloadGiven, TraceGiven bool
	// RPS is --rps, the arrival rate in requests per second (with a rate
	// profile its mean): the command's default unless RPSGiven. rate
	// says what a workload runs at.
	RPS      float64
	RPSGiven bool
	Duration string
	// DurationGiven reports that Duration was given (with a rate profile,
	// the default is one period of it).
	DurationGiven bool
	Seed          uint64
	// RateProfile is --rate-profile (a file or a built-in form),
	// Interpolation how a file's rates go between rows, and Burstiness
	// the gaps' coefficient of variation (1: Poisson).
	RateProfile, Interpolation string
	InterpolationGiven         bool
	Burstiness                 float64
}

// defaultWorkloadConfig is the workload part given no flags; the flags
// show these defaults (workloadFlags, arrivalFlags).
func defaultWorkloadConfig() workloadConfig {
	return workloadConfig{Workload: defaultWorkload, Duration: defaultDuration, Interpolation: "steps", Burstiness: 1}
}

// workloadConfigOf reads the workload part of c's flags.
func workloadConfigOf(c *cli.Context) workloadConfig {
	wc := defaultWorkloadConfig()
	wc.readFlags(c)
	return wc
}

// readFlags overlays the workload flags c gives (on the command line, or
// set by a plan's [workload] table). --rps is read where it is one rate
// (sweep's is a list of rates, parseRates): its value, the command's
// default when not given.
func (wc *workloadConfig) readFlags(c *cli.Context) {
	if isSet(c, "workload") || isSet(c, "trace") {
		wc.Workload, wc.Trace = c.String("workload"), c.String("trace")
		wc.WorkloadGiven, wc.TraceGiven = isSet(c, "workload"), isSet(c, "trace")
	}
	if rps, ok := c.Value("rps").(float64); ok {
		wc.RPS, wc.RPSGiven = rps, isSet(c, "rps")
	}
	if isSet(c, "duration") {
		wc.Duration, wc.DurationGiven = c.String("duration"), true
	}
	if isSet(c, "seed") {
		wc.Seed = c.Uint64("seed")
	}
	if isSet(c, "rate-profile") {
		wc.RateProfile = c.String("rate-profile")
	}
	if isSet(c, "rate-interpolation") {
		wc.Interpolation, wc.InterpolationGiven = c.String("rate-interpolation"), true
	}
	if isSet(c, "burstiness") {
		wc.Burstiness = c.Float64("burstiness")
	}
}

// rate is the rate a workload with arrivals arr runs at: --rps when
// given, else a rate profile's mean (the profile as given), else --rps's
// default; given reports that --rps or a profile set it.
func (wc workloadConfig) rate(arr traces.Arrivals) (rps float64, given bool) {
	if wc.RPSGiven || arr.Profile == nil {
		return wc.RPS, wc.RPSGiven
	}
	return profileMean(arr.Profile), true
}

// checkRate refuses a rate that is not a positive, finite number of
// requests per second.
func checkRate(rps float64) error {
	if !(rps > 0) || math.IsInf(rps, 0) {
		return badInputf("--rps must be a positive number of requests per second, got %v", rps)
	}
	return nil
}

// setRate sets the rate of p, a goal at a rate (cost, power, energy,
// tco): --rps, else a rate profile's mean; budget reports that a power or
// cost budget was given, which such a goal does not take. The one place
// optimize's rate is set (the workload part owns it, as it reads it).
func (wc workloadConfig) setRate(p *search.Problem, budget bool) error {
	var arr traces.Arrivals // (read only when the rate may be the profile's)
	if !wc.RPSGiven && !budget && wc.RateProfile != "" {
		var err error
		if arr, err = wc.arrivals(); err != nil {
			return err
		}
	}
	rps, given := wc.rate(arr)
	if !given {
		return badInputf("--goal %s needs --rps (the rate to serve)", p.Goal)
	}
	if err := checkRate(rps); err != nil {
		return err
	}
	if budget {
		return badInputf("--goal %s takes --rps, not a budget (budgets are for --goal throughput or batch)", p.Goal)
	}
	p.RateRPS = rps
	return nil
}

// sizes resolves the trace (its requests and their size pairs) or else
// the built-in workload (reqs is nil).
func (wc workloadConfig) sizes() (sizes *traces.Distribution, reqs []traces.Request, err error) {
	if wc.Trace == "" {
		if sizes, err = traces.Builtin(wc.Workload); err != nil {
			return nil, nil, badInputf("--workload: %v", err)
		}
		return sizes, nil, nil
	}
	if reqs, err = wc.traceRequests(); err != nil {
		return nil, nil, err
	}
	return traces.FromRequests(wc.Trace, reqs), reqs, nil
}

// traceRequests reads the requests of the --trace file.
func (wc workloadConfig) traceRequests() ([]traces.Request, error) {
	if wc.WorkloadGiven {
		return nil, badInputf("--workload and --trace are exclusive: give one of them")
	}
	return readTraceFile(wc.Trace)
}

// readTraceFile reads the --trace file (flag or plan key). A file that is
// not there is an input error naming the flag, and, where the name is a
// built-in workload's, saying that --workload takes it.
func readTraceFile(path string) ([]traces.Request, error) {
	reqs, err := traces.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if _, berr := traces.Builtin(path); berr == nil {
			return nil, badInputf("--trace %s: no such file; %s is a built-in size distribution: give it as --workload %s", path, path, path)
		}
		return nil, badInputf("--trace %s: no such file (built-in size distributions are given as --workload: %s)", path, strings.Join(traces.BuiltinNames(), ", "))
	}
	if err != nil {
		return nil, badInput(err)
	}
	return reqs, nil
}

// explain turns a simulation error about a request into an input error
// that names the trace file's line when the requests came from one.
func (w *workload) explain(err error) error {
	var ue *evaluator.UnservableError
	if errors.As(err, &ue) {
		if w.File != "" {
			return badInputf("%s:%d: %v", w.File, ue.RequestID+2, err)
		}
		return badInputf("%v (synthesized from %s)", err, w.Source)
	}
	return err
}

// explainDrawn turns a search's error about a request whose sizes were
// drawn from a trace file's request into bad input naming that request's
// line (request i of a trace is on line i+2).
func explainDrawn(err error, w *search.Workload) error {
	var de *search.DrawnRequestError
	if err == nil || w == nil || w.Sizes == nil || !errors.As(err, &de) {
		return err
	}
	if b, berr := traces.Builtin(w.Sizes.Name()); berr == nil && b == w.Sizes {
		return err // a built-in distribution: no file line to name
	}
	return badInputf("%s:%d: %v (a request drawn with the sizes of this line's request)", w.Sizes.Name(), de.Source+2, err)
}

// rateWorkload builds the workload of the commands that simulate many
// rates (optimize, sweep, evaluate): the sizes of the built-in workload or
// of the trace's requests, Duration long at every rate, seeded by Seed.
// With independent set (compat mode) sizes are drawn independently.
func rateWorkload(wc workloadConfig, independent bool) (*search.Workload, error) {
	arr, durS, err := wc.timing()
	if err != nil {
		return nil, err
	}
	sizes, _, err := wc.sizes()
	if err != nil {
		return nil, err
	}
	return &search.Workload{Sizes: sizes, DurationS: durS, Seed: wc.Seed, Independent: independent, Arrivals: arr}, nil
}

// parseAbort reads --abort-after: a duration, or 0 for no abort.
func parseAbort(a string) (float64, error) {
	return parseSecondsOrOff("abort-after", a, " (or 0 to turn it off)")
}

// parseSecondsOrOff reads flag's value v, a duration or "0" (off, 0 s);
// a bad one is bad input naming the flag, then its error and hint.
func parseSecondsOrOff(flag, v, hint string) (float64, error) {
	if strings.TrimSpace(v) == "0" {
		return 0, nil
	}
	sec, err := parseSeconds(v)
	if err != nil {
		return 0, badInputf("--%s: %v%s", flag, err, hint)
	}
	return sec, nil
}
