package perf

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// ProfileRow is one measured run of a profiling CSV, with times converted
// to seconds.
type ProfileRow struct {
	// Model and Hardware name the pair, e.g. "bloom-176b" and "a100-80gb".
	Model, Hardware string
	// TP is the tensor parallelism (GPUs the model is split over).
	TP int
	// PromptSize is the tokens of each prompt, BatchSize the prompts (and
	// then decoding requests) in the batch, TokenSize the tokens generated
	// per request.
	PromptSize, BatchSize, TokenSize int
	// PromptTime is the duration in seconds of the prompt iteration of
	// the whole batch; TokenTime that of one decode iteration.
	PromptTime, TokenTime float64
	// E2ETime is the end-to-end time of the run in seconds, and PeakPower
	// and AveragePower the power figures as the profile gives them; all
	// three are 0 when the profile lacks the column. The fit ignores them.
	E2ETime, PeakPower, AveragePower float64
}

// Limits on a profile's values: sizes and tp up to maxProfileSize, times
// from a microsecond up to maxProfileMillis milliseconds (about 11.6
// days), power fractions (where measured) from 1% to twice the board's
// rating. Other values are surely typos, and the bounds keep every fitted
// curve and every error printed finite.
const (
	maxProfileSize   = 1 << 30
	minProfileMillis = 1e-3
	maxProfileMillis = 1e9
	minPowerFraction = 0.01
	maxPowerFraction = 2.0
)

// ProfileColumns are the columns a profile's header must name (in any
// order). The optional columns e2e_time, peak_power and average_power are
// read when present; any other column is ignored.
var ProfileColumns = []string{"model", "hardware", "tensor_parallel", "prompt_size",
	"batch_size", "token_size", "prompt_time", "token_time"}

// ReadProfileFile reads the profiling CSV at path; see ReadProfile.
func ReadProfileFile(path string) ([]ProfileRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("perf: %w", err)
	}
	defer f.Close()
	return ReadProfile(f, path)
}

// ReadProfile reads a profiling CSV (header with the ProfileColumns, one
// row per measured run, times in milliseconds) from r. name is used in
// error messages, which give the line, the column and what was expected.
// Sizes and the tensor parallelism must be positive integers, times
// positive finite numbers (at most 2^30 and 1e9 ms); a file without data rows is an error.
func ReadProfile(r io.Reader, name string) ([]ProfileRow, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("perf: %s: empty file, expected a header line naming the columns %s",
			name, strings.Join(ProfileColumns, ","))
	}
	if err != nil {
		return nil, fmt.Errorf("perf: %s: %w", name, err)
	}
	idx := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if _, dup := idx[h]; !dup {
			idx[h] = i
		}
	}
	var missing []string
	for _, c := range ProfileColumns {
		if _, ok := idx[c]; !ok {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("perf: %s:1: header lacks column(s) %s (expected %s)",
			name, strings.Join(missing, ", "), strings.Join(ProfileColumns, ","))
	}
	col := func(c string) int {
		if i, ok := idx[c]; ok {
			return i
		}
		return -1
	}
	var rows []ProfileRow
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("perf: %s:%d:%d: %v", name, pe.Line, pe.Column, pe.Err)
			}
			return nil, fmt.Errorf("perf: %s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		field := func(c string) (string, int) {
			i := col(c)
			return strings.TrimSpace(rec[i]), i
		}
		bad := func(c string, i int, want, got string) error {
			return fmt.Errorf("perf: %s:%d: column %d (%s): expected %s, got %q", name, line, i+1, c, want, got)
		}
		str := func(c string) (string, error) {
			s, i := field(c)
			if s == "" {
				return "", bad(c, i, "a name", s)
			}
			return s, nil
		}
		integer := func(c string) (int, error) {
			s, i := field(c)
			v, err := strconv.Atoi(s)
			if err != nil || v <= 0 || v > maxProfileSize {
				return 0, bad(c, i, fmt.Sprintf("a positive integer up to %d", maxProfileSize), s)
			}
			return v, nil
		}
		number := func(c string, optional bool) (float64, error) {
			i := col(c)
			if i < 0 {
				return 0, nil
			}
			s := strings.TrimSpace(rec[i])
			if optional && s == "" {
				return 0, nil
			}
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > maxProfileMillis || (!optional && v < minProfileMillis) {
				want := "a number of milliseconds from 0.001 (a microsecond) up to 1e9"
				if optional {
					want = "a non-negative number up to 1e9, or nothing"
				}
				return 0, bad(c, i, want, s)
			}
			return v, nil
		}
		// A power column is a fraction of the board's power: 0 (or
		// nothing) where it was not measured, else between 1% (below
		// any powered GPU's idle draw) and twice the board's rating.
		power := func(c string) (float64, error) {
			v, err := number(c, true)
			if err == nil && v != 0 && (v < minPowerFraction || v > maxPowerFraction) {
				i := col(c)
				return 0, bad(c, i, fmt.Sprintf("a fraction of board power from %g to %g, or 0 or nothing where not measured", minPowerFraction, maxPowerFraction), strings.TrimSpace(rec[i]))
			}
			return v, err
		}
		var row ProfileRow
		var errs [11]error
		row.Model, errs[0] = str("model")
		row.Hardware, errs[1] = str("hardware")
		row.TP, errs[2] = integer("tensor_parallel")
		row.PromptSize, errs[3] = integer("prompt_size")
		row.BatchSize, errs[4] = integer("batch_size")
		row.TokenSize, errs[5] = integer("token_size")
		row.PromptTime, errs[6] = number("prompt_time", false)
		row.TokenTime, errs[7] = number("token_time", false)
		row.E2ETime, errs[8] = number("e2e_time", true)
		row.PeakPower, errs[9] = power("peak_power")
		row.AveragePower, errs[10] = power("average_power")
		for _, e := range errs {
			if e != nil {
				return nil, e
			}
		}
		row.PromptTime /= 1000
		row.TokenTime /= 1000
		row.E2ETime /= 1000
		if row.PromptTime <= 0 || row.TokenTime <= 0 {
			return nil, fmt.Errorf("perf: %s:%d: times too small to represent in seconds", name, line)
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("perf: %s: no data rows after the header, expected one row per measured run", name)
	}
	return rows, nil
}
