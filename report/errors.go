package report

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// InputError marks an error caused by the user's input (a CSV file, a
// design name, a flag value); its message says what was expected.
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }

// inputf formats an InputError.
func inputf(format string, a ...any) error {
	return InputError{fmt.Errorf(format, a...)}
}

// IsInput reports whether err is (or wraps) an InputError.
func IsInput(err error) bool {
	var ie InputError
	return errors.As(err, &ie)
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// fixedOr is v with prec decimals, or none where v is not finite (a
// figure nothing measured).
func fixedOr(v float64, prec int, none string) string {
	if !finite(v) {
		return none
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}
