package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"splitplan/search"
)

// The progress lines of long runs, on standard error: a self-rewriting
// line on a terminal, nothing on a pipe or a file (optimize's search can
// also write plain lines to a log, SPLITPLAN_PROGRESS=1).

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// lineProgress shows a long run's progress on a terminal (a fit, a
// simulation, a sweep, a trace being written): one line, rewritten at most
// ten times a second, from the first second on; nothing when w is not a
// terminal.
type lineProgress struct {
	w        io.Writer
	name     string
	terminal bool
	start    time.Time
	last     time.Time
	shown    bool
}

// newLineProgress returns the progress of command name on w.
func newLineProgress(w io.Writer, name string) *lineProgress {
	p := &lineProgress{w: w, name: name, start: time.Now()}
	p.terminal = isTerminal(w)
	return p
}

// update shows stage, done of total (measured.Options.Progress has its signature).
func (p *lineProgress) update(stage string, done, total int) {
	now := time.Now()
	if !p.terminal || now.Sub(p.start) < time.Second || now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	fmt.Fprintf(p.w, "\r\033[K%s: %s, %s (%d/%d)", p.name, now.Sub(p.start).Round(time.Second), stage, done, total)
	p.shown = true
}

// done clears the progress line.
func (p *lineProgress) done() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

// progress shows a search's progress on stderr: a self-rewriting line on
// a terminal once the search has run a second; nothing on a pipe or a
// file, unless SPLITPLAN_PROGRESS=1 asks for a plain line every 10 s.
type progress struct {
	w        io.Writer
	terminal bool
	start    time.Time
	mu       sync.Mutex
	last     time.Time
	shown    bool
}

// newProgress returns the progress of a search on w.
func newProgress(w io.Writer) *progress {
	pr := &progress{w: w, start: time.Now()}
	pr.terminal = isTerminal(w)
	if !pr.terminal && !progressInLogs() {
		pr.w = io.Discard // quiet on a pipe or a file, unless asked
	}
	return pr
}

// progressInLogs reports whether SPLITPLAN_PROGRESS=1 asks for optimize's
// progress lines where standard error is not a terminal (a log of a long
// batch run); by default a pipe or a file gets none.
func progressInLogs() bool { return os.Getenv("SPLITPLAN_PROGRESS") == "1" }

// update shows the search's progress p (search.Problem.Progress).
func (pr *progress) update(p search.Progress) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	now := time.Now()
	since := now.Sub(pr.start)
	interval := 100 * time.Millisecond
	if !pr.terminal {
		interval = 10 * time.Second
	}
	if p.Finished != "" && since >= time.Second {
		// A design done is worth a line of its own, on a terminal too.
		line := fmt.Sprintf("optimize: %s, %d simulations, %d points pruned; %s finished", since.Round(time.Second), p.Simulations, p.Pruned, p.Finished)
		if pr.terminal {
			fmt.Fprintf(pr.w, "\r\033[K%s\n", line)
		} else {
			fmt.Fprintln(pr.w, line)
		}
		return
	}
	if since < time.Second || now.Sub(pr.last) < interval {
		return
	}
	pr.last = now
	line := fmt.Sprintf("optimize: %s, %d simulations, %d points pruned", since.Round(time.Second), p.Simulations, p.Pruned)
	if p.Best != "" {
		line += fmt.Sprintf("; best so far in %s: %s", p.Design, p.Best)
	}
	if pr.terminal {
		fmt.Fprintf(pr.w, "\r\033[K%s", line)
		pr.shown = true
	} else if since >= 10*time.Second {
		fmt.Fprintln(pr.w, line)
	}
}

// done clears the progress line.
func (pr *progress) done() {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.shown {
		fmt.Fprint(pr.w, "\r\033[K")
	}
}
