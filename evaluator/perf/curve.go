package perf

// Curve is a piecewise-linear function given by its knots: X strictly
// increasing, Y the values at X. Between knots it interpolates linearly;
// past either end it extends the first or last segment linearly. A curve
// with one knot is constant. The zero Curve is empty and answers 0.
type Curve struct {
	X, Y []float64
}

// At returns the curve's value at x and whether x lies outside the knots'
// range [X[0], X[len(X)-1]] (an extrapolation). It does not allocate.
func (c Curve) At(x float64) (y float64, extrapolated bool) {
	return curveAt(c.X, c.Y, x)
}

// curveAt is At on the knots X, Y. The performance models' hot paths call
// it with their curves' slices: At on a curve held in a struct copies the
// curve to the stack first, and that copy's stores and reloads stalled.
func curveAt(X, Y []float64, x float64) (y float64, extrapolated bool) {
	n := len(X)
	switch n {
	case 0:
		return 0, true
	case 1:
		return Y[0], x != X[0]
	}
	extrapolated = x < X[0] || x > X[n-1]
	// The smallest i in [1, n-1] with X[i] >= x; the segment is i-1..i.
	// Branch-free lower bound over X[1:n-1] (the last index stands for
	// everything beyond it): the step is taken by a multiplication, which
	// the compiler turns into a conditional move, not a branch the
	// processor must guess.
	lo, size := 1, n-1
	for size > 1 {
		half := size >> 1
		lt := 0
		if X[lo+half-1] < x {
			lt = 1
		}
		lo += half * lt
		size -= half
	}
	x0, x1 := X[lo-1], X[lo]
	y0, y1 := Y[lo-1], Y[lo]
	if x == x1 {
		return y1, false
	}
	return y0 + (y1-y0)*(x-x0)/(x1-x0), extrapolated
}

// Len returns the number of knots.
func (c Curve) Len() int { return len(c.X) }

// clone returns a deep copy of c, so a model built from it cannot be
// changed through the caller's slices.
func (c Curve) clone() Curve {
	return Curve{X: append([]float64(nil), c.X...), Y: append([]float64(nil), c.Y...)}
}
