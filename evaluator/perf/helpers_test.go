package perf

import (
	"os"
	"testing"
)

// sharedProfile is the shipped profile, beside the repository.
const sharedProfile = "../../../shared/data/splitwise-profiles/perf_model.csv"

// realRows reads the shipped profile, skipping the test when it is absent.
func realRows(tb testing.TB) []ProfileRow {
	tb.Helper()
	if _, err := os.Stat(sharedProfile); err != nil {
		tb.Skipf("shared profile not available: %v", err)
	}
	rows, err := ReadProfileFile(sharedProfile)
	if err != nil {
		tb.Fatal(err)
	}
	return rows
}

// realPair fits the shipped profile and returns one pair.
func realPair(tb testing.TB, model, hardware string, tp int) *Pair {
	tb.Helper()
	pairs, err := Fit(realRows(tb), DefaultMixedPenalty)
	if err != nil {
		tb.Fatal(err)
	}
	t := Table{Pairs: pairs}
	p, err := t.Lookup(model, hardware, tp)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
