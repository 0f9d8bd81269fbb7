package search

import "fmt"

// KeptPointBytes is about the memory a search holds for each point it
// keeps while it runs (the point, its SLO verdict, its memo entry).
const KeptPointBytes = 1500

// DefaultMaxKeptPoints is the Problem.MaxKeptPoints the command line
// sets: about 375 MB of kept points.
const DefaultMaxKeptPoints = 250_000

// KeptPointsError refuses an exhaustive search that would keep more
// points than Problem.MaxKeptPoints.
type KeptPointsError struct {
	// Points is the size of the design spaces, Designs their number and
	// Limit the Problem's MaxKeptPoints.
	Points, Designs, Limit int
}

func (e *KeptPointsError) Error() string {
	return fmt.Sprintf("search: an exhaustive search keeping every point would simulate and keep %d points of %d designs (about %d MB); at most %d",
		e.Points, e.Designs, int64(e.Points)*KeptPointBytes>>20, e.Limit)
}

// streamed is what an exhaustive search of a rate goal keeps of a design
// whose points are not kept (Problem.DropPoints): its best feasible
// point, the point that failed closest to passing, and the keys of the
// simulations stopped once their failure was certain (to complete them if
// nothing is found), so that its memory does not grow with the design
// space. Guarded by designSearch.mu.
type streamed struct {
	bestPt, closestPt *Point
	stoppedKeys       []pointKey
	streamedN         int
}

// offer takes a simulated point of a streamed design search (d.mu held):
// it may become the best (least key) or the closest (highest closeness;
// ties: the first in sortedPoints' order, as closest picks among kept
// points). A stopped point has no verdict: its key is kept for
// completeStoppedStreamed.
func (d *designSearch) offer(pt *Point) {
	d.streamedN++
	if pt.Feasible && (d.bestPt == nil || less(d.s.keyOf(*pt), d.s.keyOf(*d.bestPt))) {
		d.bestPt = pt
	}
	if pt.Feasible {
		d.keepFeasible(pt) // verify.go
	}
	if pt.Stopped {
		d.stoppedKeys = append(d.stoppedKeys, pointKey{pt.Prompt, pt.Token, pt.RateRPS})
		return
	}
	d.offerClosest(pt)
}

// offerClosest makes pt the closest point if it is closer than the
// current one, or as close and first in sortedPoints' order.
func (d *designSearch) offerClosest(pt *Point) {
	c := d.closestPt
	if c == nil {
		d.closestPt = pt
		return
	}
	a, b := closeness(pt), closeness(c)
	if a > b || (a == b && sortsBefore(pt, c)) {
		d.closestPt = pt
	}
}

// sortsBefore reports whether a comes before b in sortedPoints' order:
// prompt machines, token machines, rate.
func sortsBefore(a, b *Point) bool {
	if a.Prompt != b.Prompt {
		return a.Prompt < b.Prompt
	}
	if a.Token != b.Token {
		return a.Token < b.Token
	}
	return a.RateRPS < b.RateRPS
}

// completeStoppedStreamed is completeStopped for a streamed design: it
// simulates each stopped point again to its end (rerun) and offers it as
// the closest point.
func (d *designSearch) completeStoppedStreamed() error {
	d.mu.Lock()
	keys := d.stoppedKeys
	d.stoppedKeys = nil
	d.mu.Unlock()
	for _, k := range keys {
		cl, err := d.cluster(k.prompt, k.token)
		if err != nil {
			return err
		}
		pt := d.newPoint(cl, k.rate)
		pt.Simulated, pt.Stopped = true, true
		if err := d.rerun(pt, d.s.energy, true); err != nil {
			return err
		}
		d.mu.Lock()
		d.offerClosest(pt)
		d.mu.Unlock()
	}
	return nil
}
