package quantile

import (
	"math"
	"slices"
)

// Median returns the exact median of v, the mean of the two middle values
// when len(v) is even, sorting v in place; NaN for an empty v. (The
// sketch's quantiles are for streams; this is for a slice held whole.)
func Median(v []float64) float64 {
	n := len(v)
	if n == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
