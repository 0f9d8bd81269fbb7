package study

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// State is where a job of a result directory stands.
type State int

// States of a job.
const (
	// Done: its result file verifies.
	Done State = iota
	// Missing: no result file and no recorded failure (not run yet, or its
	// shard was stopped before it).
	Missing
	// Failed: its last run failed; the error is kept in its FailedPath.
	Failed
	// Unverified: a result file is there but its checksum trailer does not
	// match (a truncated or edited file); a re-run redoes it.
	Unverified
)

var stateNames = [...]string{Done: "done", Missing: "missing", Failed: "failed", Unverified: "unverified"}

// String is the state's name, e.g. "missing".
func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return fmt.Sprintf("State(%d)", int(s))
	}
	return stateNames[s]
}

// Status is one job's state in a result directory.
type Status struct {
	// Job is the job.
	Job Job
	// State is where it stands.
	State State
	// Reason is a failed job's error (its FailedPath's first line).
	Reason string
}

// Check returns the state of every job in dir, in job order. A verified
// result counts as done even where an older failure is recorded.
func Check(dir string, jobs []Job) []Status {
	out := make([]Status, len(jobs))
	for i, j := range jobs {
		out[i] = Status{Job: j, State: Missing}
		if _, ok := Verified(ResultPath(dir, j)); ok {
			out[i].State = Done
			continue
		}
		if msg, err := os.ReadFile(FailedPath(dir, j)); err == nil {
			out[i].State = Failed
			out[i].Reason, _, _ = strings.Cut(strings.TrimSpace(string(msg)), "\n")
			continue
		}
		if _, err := os.Stat(ResultPath(dir, j)); err == nil {
			out[i].State = Unverified
		}
	}
	return out
}

// WriteSummary writes what is done, per axis and value, then one line per
// job not done:
//
//	study: 5 of 6 jobs done, 1 missing
//	  rps      5: 3/3   10: 2/3 (1 missing)
//	missing  10-cb319ebb3448
//
// Values are in the study file's order.
func WriteSummary(w io.Writer, sts []Status, axes []string) error {
	count := map[State]int{}
	for _, s := range sts {
		count[s.State]++
	}
	ew := &errWriter{w: w}
	ew.printf("study: %d of %d jobs done%s\n", count[Done], len(sts), notDone(count))
	width := 0
	for _, a := range axes {
		width = max(width, len(a))
	}
	for _, a := range axes {
		var order []string
		per := map[string]map[State]int{}
		for _, s := range sts {
			v := s.Job.Axes[a]
			if per[v] == nil {
				per[v] = map[State]int{}
				order = append(order, v)
			}
			per[v][s.State]++
		}
		parts := make([]string, len(order))
		for i, v := range order {
			c := per[v]
			total := c[Done] + c[Missing] + c[Failed] + c[Unverified]
			parts[i] = fmt.Sprintf("%s: %d/%d", v, c[Done], total)
			if c[Done] < total {
				parts[i] += " (" + strings.TrimPrefix(notDone(c), ", ") + ")"
			}
		}
		ew.printf("  %-*s  %s\n", width, a, strings.Join(parts, "   "))
	}
	for _, s := range sts {
		switch s.State {
		case Done:
		case Failed:
			ew.printf("%-10s %s: %s\n", s.State, s.Job.Key, s.Reason)
		default:
			ew.printf("%-10s %s\n", s.State, s.Job.Key)
		}
	}
	return ew.err
}

// notDone is ", 1 missing, 2 failed" for the counts of c not done.
func notDone(c map[State]int) string {
	out := ""
	for _, st := range []State{Missing, Failed, Unverified} {
		if c[st] > 0 {
			out += fmt.Sprintf(", %d %s", c[st], st)
		}
	}
	return out
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
