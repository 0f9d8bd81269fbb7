package perf

import (
	"math"
	"testing"
)

func TestCurveAt(t *testing.T) {
	t.Parallel()
	c := Curve{X: []float64{1, 2, 4}, Y: []float64{10, 20, 30}}
	one := Curve{X: []float64{5}, Y: []float64{7}}
	tests := []struct {
		name  string
		c     Curve
		x     float64
		want  float64
		extra bool
	}{
		{"first knot", c, 1, 10, false},
		{"middle knot", c, 2, 20, false},
		{"last knot", c, 4, 30, false},
		{"interpolate first segment", c, 1.5, 15, false},
		{"interpolate second segment", c, 3, 25, false},
		{"extrapolate below", c, 0, 0, true},
		{"extrapolate above", c, 6, 40, true},
		{"far below", c, -9, -90, true},
		{"one knot at it", one, 5, 7, false},
		{"one knot below", one, 1, 7, true},
		{"one knot above", one, 100, 7, true},
		{"empty", Curve{}, 3, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ex := tt.c.At(tt.x)
			if math.Abs(got-tt.want) > 1e-12 || ex != tt.extra {
				t.Errorf("At(%v) = %v, %v; want %v, %v", tt.x, got, ex, tt.want, tt.extra)
			}
		})
	}
}

// TestCurveAtMatchesLinearScan checks the binary search against a plain
// scan on many points of a longer curve.
func TestCurveAtMatchesLinearScan(t *testing.T) {
	t.Parallel()
	c := Curve{X: []float64{-3, 0, 1, 2.5, 7, 8, 100}, Y: []float64{4, 1, 1, 9, -2, 0, 50}}
	for i, x := range c.X {
		if y, ex := c.At(x); y != c.Y[i] || ex {
			t.Errorf("At(knot %v) = %v, %v; want %v, false", x, y, ex, c.Y[i])
		}
	}
	for x := -10.0; x <= 120; x += 0.37 {
		i := 1
		for i < len(c.X)-1 && c.X[i] < x {
			i++
		}
		want := c.Y[i-1] + (c.Y[i]-c.Y[i-1])*(x-c.X[i-1])/(c.X[i]-c.X[i-1])
		got, ex := c.At(x)
		if math.Abs(got-want) > 1e-9 {
			t.Fatalf("At(%v) = %v, want %v", x, got, want)
		}
		if ex != (x < -3 || x > 100) {
			t.Fatalf("At(%v) extrapolated = %v", x, ex)
		}
	}
}
