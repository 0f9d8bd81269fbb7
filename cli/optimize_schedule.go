package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"splitplan/evaluator"
	"splitplan/report"
	"splitplan/search"
)

// scheduleFlags are optimize's flags for plans over a rate profile.
func scheduleFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "schedule", Usage: "with --rate-profile and a goal at a rate: plan the machines per interval of this `DURATION` (1h), beside the static plan and the ideal one, each simulated over the whole profile"},
		&cli.StringFlag{Name: "scale-delay", Value: "5m", Usage: "with --schedule: the time a machine takes to serve once started (model load); a scheduled interval's new machines start this long before it"},
		&cli.BoolFlag{Name: "autoscale", Usage: "with --schedule: also simulate a reactive autoscaler (target utilization per pool, the scale delay, a cooldown)"},
		&cli.Float64Flag{Name: "autoscale-target", Value: 0.7, Usage: "with --autoscale: the utilization the autoscaler aims at (a prompt pool's busy fraction, a token pool's KV-cache fraction)"},
		&cli.StringFlag{Name: "autoscale-period", Value: "30s", Usage: "with --autoscale: how often it looks"},
		&cli.StringFlag{Name: "autoscale-cooldown", Value: "5m", Usage: "with --autoscale: the least time between a pool's change and its scale-down"},
		&cli.StringFlag{Name: "schedule-out", Usage: "with --schedule: write every design's plans per interval to `FILE` (.csv, or .json)"},
	}
}

// minAutoscalePeriodS is the shortest --autoscale-period: an autoscaler
// looks at utilization every few seconds at most (a shorter period makes
// a profile's simulation take hours for nothing).
const minAutoscalePeriodS = 1.0

// scheduleSpecFrom reads the schedule flags (ok false without --schedule).
func scheduleSpecFrom(c *cli.Context) (spec search.ScheduleSpec, ok bool, err error) {
	if !isSet(c, "schedule") {
		for _, f := range []string{"autoscale", "autoscale-target", "autoscale-period", "autoscale-cooldown", "schedule-out", "scale-delay"} {
			if isSet(c, f) {
				return spec, false, badInputf("--%s goes with --schedule DURATION", f)
			}
		}
		return spec, false, nil
	}
	if !c.Bool("autoscale") {
		for _, f := range []string{"autoscale-target", "autoscale-period", "autoscale-cooldown"} {
			if isSet(c, f) {
				return spec, false, badInputf("--%s sets the reactive autoscaler: it goes with --autoscale", f)
			}
		}
	}
	dur := func(flag string) float64 {
		if err != nil {
			return 0
		}
		var v float64
		if v, err = parseSeconds(c.String(flag)); err != nil || v < 0 {
			err = badInputf("--%s %q: expected a duration like 1h, 5m or 30s", flag, c.String(flag))
		}
		return v
	}
	spec.IntervalS, spec.DelayS = dur("schedule"), dur("scale-delay")
	if err == nil && !(spec.IntervalS > 0) {
		err = badInputf("--schedule %q: expected a positive interval like 1h", c.String("schedule"))
	}
	if err == nil && spec.DelayS >= spec.IntervalS {
		err = badInputf("--scale-delay %s is not shorter than the --schedule interval %s: a machine would serve after its interval", c.String("scale-delay"), c.String("schedule"))
	}
	if c.Bool("autoscale") {
		a := &evaluator.AutoScale{TargetUtil: c.Float64("autoscale-target"), PeriodS: dur("autoscale-period"), CooldownS: dur("autoscale-cooldown")}
		if err == nil && !(a.TargetUtil > 0 && a.TargetUtil <= 1) {
			err = badInputf("--autoscale-target %v: expected a utilization in (0, 1], e.g. 0.7", a.TargetUtil)
		}
		if err == nil && !(a.PeriodS >= minAutoscalePeriodS) {
			err = badInputf("--autoscale-period %q: expected a duration of at least %gs (how often the autoscaler looks at the utilization)", c.String("autoscale-period"), minAutoscalePeriodS)
		}
		spec.Auto = a
	}
	if path := c.String("schedule-out"); err == nil && path != "" {
		if ext := strings.ToLower(filepath.Ext(path)); ext != ".csv" && ext != ".json" {
			err = badInputf("--schedule-out %s: expected a .csv or .json file", path)
		}
	}
	return spec, true, err
}

// optimizeSchedule plans every design over the rate profile (optimize
// --schedule): static, scheduled, ideal and reactive plans, printed, and
// written to --schedule-out and --plot.
func optimizeSchedule(c *cli.Context, p *search.Problem, spec search.ScheduleSpec) error {
	switch {
	case p.Workload.Arrivals.Profile == nil:
		return badInputf("--schedule plans over a rate profile: give --rate-profile")
	case !p.Goal.NeedsRate():
		return badInputf("--schedule sizes a goal at a rate (cost, power, energy, tco), not --goal %s", p.Goal)
	case spec.IntervalS > p.Workload.DurationS:
		return badInputf("--schedule %s is longer than the profile simulated (%gs, --duration): a plan needs at least one whole interval", c.String("schedule"), p.Workload.DurationS)
	}
	for _, f := range []string{"out", "points", "pairs", "exhaustive", "confidence", "scenarios", "sensitivity", "report"} {
		if isSet(c, f) {
			return badInputf("--%s does not go with --schedule (its plans are written by --schedule-out)", f)
		}
	}
	if checkOnly(c.Context) {
		return p.Validate()
	}
	prog := newLineProgress(c.App.ErrWriter, "optimize --schedule")
	defer prog.done()
	ds, err := search.PlanSchedules(c.Context, p, spec)
	prog.done()
	if err != nil {
		return explainSearchError(err, p)
	}
	if path := c.String("schedule-out"); path != "" {
		write := func(f io.Writer) error { return report.WriteScheduleCSV(f, ds) }
		if strings.EqualFold(filepath.Ext(path), ".json") {
			write = func(f io.Writer) error { return report.WriteScheduleJSON(f, p, spec, ds) }
		}
		if err := writeOutput(c.Context, path, c.App.Writer, write); err != nil {
			return err
		}
	}
	w := reportWriter(c, "schedule-out")
	if c.String("format") == "json" {
		if err := report.WriteScheduleJSON(w, p, spec, ds); err != nil {
			return err
		}
	} else if err := report.PrintSchedules(w, p, spec, ds); err != nil {
		return err
	}
	if dir := c.String("plot"); dir != "" {
		paths, err := report.WriteDayPlots(dir, p, ds)
		if c.String("format") != "json" {
			for _, path := range paths {
				fmt.Fprintf(w, "wrote     %s\n", path)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}
