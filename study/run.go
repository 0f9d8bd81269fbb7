package study

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Runner runs one job and returns its result as CSV (a header row, then
// one row per design).
type Runner func(ctx context.Context, j Job) ([]byte, error)

const trailer = "#sha256 "

// ResultPath is where a job's result file lives in dir.
func ResultPath(dir string, j Job) string { return filepath.Join(dir, j.Key+".csv") }

// Verified reports whether path holds a complete result: its last line is a
// checksum trailer matching the CSV above it.
func Verified(path string) ([]byte, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	i := bytes.LastIndex(data, []byte(trailer))
	if i < 0 || !bytes.HasSuffix(data, []byte("\n")) {
		return nil, false
	}
	body := data[:i]
	sum := sha256.Sum256(body)
	if strings.TrimSpace(string(data[i+len(trailer):])) != hex.EncodeToString(sum[:]) {
		return nil, false
	}
	return body, true
}

// Progress is a shard's state after each of its jobs, for a progress line.
type Progress struct {
	// Done jobs of Total are finished: run now, failed, or found verified.
	Done, Total int
	// Ran and Failed count the jobs run now that succeeded and failed.
	Ran, Failed int
	// CostRan is the estimated cost (Job.Cost) of the jobs run now (whether
	// they succeeded or failed) and CostLeft that of the jobs not yet
	// finished: the time spent so far × CostLeft / CostRan estimates the
	// time left.
	CostRan, CostLeft float64
}

// FailedPath is where the error of a job that failed is kept in dir.
func FailedPath(dir string, j Job) string { return filepath.Join(dir, j.Key+".err") }

// FailedError is returned by Run when jobs failed; each failure's message
// is in the job's FailedPath.
type FailedError struct {
	// Keys are the failed jobs, in job order, and Errs their errors.
	Keys []string
	Errs []error
}

// Error implements error.
func (e *FailedError) Error() string {
	msg := fmt.Sprintf("%d jobs failed", len(e.Keys))
	for i, k := range e.Keys {
		msg += fmt.Sprintf("\n  %s: %v", k, e.Errs[i])
	}
	return msg
}

// Run runs the jobs not yet verified in dir, writing each result atomically
// (a temporary file renamed into place), and returns how many it ran. A job
// that fails leaves its error in FailedPath (removed once it succeeds) and
// the others still run; Run then returns a *FailedError. A cancelled
// context stops it between or during jobs without leaving a partial result
// file; running again resumes. progress, when not nil, is called before
// the first job and after each.
func Run(ctx context.Context, dir string, jobs []Job, run Runner, progress func(Progress)) (int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	pr := Progress{Total: len(jobs)}
	for _, j := range jobs {
		pr.CostLeft += j.Cost
	}
	report := func() {
		if progress != nil {
			progress(pr)
		}
	}
	report()
	var failed FailedError
	for _, j := range jobs {
		if _, ok := Verified(ResultPath(dir, j)); ok {
			pr.Done++
			pr.CostLeft -= j.Cost
			report()
			continue
		}
		if err := ctx.Err(); err != nil {
			return pr.Ran, err
		}
		out, err := run(ctx, j)
		if cerr := ctx.Err(); cerr != nil {
			return pr.Ran, cerr
		}
		if err == nil {
			err = writeAtomic(ResultPath(dir, j), out)
		}
		if err == nil {
			if rerr := os.Remove(FailedPath(dir, j)); rerr != nil && !os.IsNotExist(rerr) {
				return pr.Ran, rerr
			}
			pr.Ran++
		} else {
			failed.Keys = append(failed.Keys, j.Key)
			failed.Errs = append(failed.Errs, err)
			if werr := writeFileAtomic(FailedPath(dir, j), []byte(err.Error()+"\n")); werr != nil {
				return pr.Ran, werr
			}
			pr.Failed++
		}
		pr.Done++
		pr.CostRan += j.Cost
		pr.CostLeft -= j.Cost
		report()
	}
	if len(failed.Keys) > 0 {
		return pr.Ran, &failed
	}
	return pr.Ran, nil
}

// writeAtomic writes body and its checksum trailer to path atomically.
func writeAtomic(path string, body []byte) error {
	sum := sha256.Sum256(body)
	return writeFileAtomic(path, append(append([]byte{}, body...), []byte(trailer+hex.EncodeToString(sum[:])+"\n")...))
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory, synced and renamed into place.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// Merge reads every job's verified result from dir and returns one CSV with
// the axes as leading columns (named axis_NAME), rows in job order, and the
// keys of the jobs whose results are missing or do not verify. The result
// columns are the union of the jobs' columns in order of first appearance
// (optimize adds some only when they apply, e.g. analytic_bound), a job
// lacking one leaving it empty. The output depends only on the jobs and
// their results, not on how they were sharded.
func Merge(dir string, jobs []Job, axes []string) ([]byte, []string, error) {
	type result struct {
		job  Job
		recs [][]string
	}
	var results []result
	var missing, cols []string
	colIndex := map[string]int{}
	for _, j := range jobs {
		body, ok := Verified(ResultPath(dir, j))
		if !ok {
			missing = append(missing, j.Key)
			continue
		}
		recs, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
		if err == nil && len(recs) == 0 {
			err = fmt.Errorf("no header")
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %v", ResultPath(dir, j), err)
		}
		seen := map[string]bool{}
		for _, c := range recs[0] {
			if seen[c] {
				return nil, nil, fmt.Errorf("%s: column %q twice", ResultPath(dir, j), c)
			}
			seen[c] = true
			if _, ok := colIndex[c]; !ok {
				colIndex[c] = len(cols)
				cols = append(cols, c)
			}
		}
		results = append(results, result{j, recs})
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if len(results) > 0 {
		header := []string{"job"}
		for _, a := range axes {
			header = append(header, "axis_"+a)
		}
		w.Write(append(header, cols...))
	}
	for _, r := range results {
		for _, rec := range r.recs[1:] {
			row := make([]string, 1+len(axes)+len(cols))
			row[0] = r.job.Key
			for i, a := range axes {
				row[1+i] = r.job.Axes[a]
			}
			for i, v := range rec {
				row[1+len(axes)+colIndex[r.recs[0][i]]] = v
			}
			w.Write(row)
		}
	}
	w.Flush()
	return buf.Bytes(), missing, w.Error()
}
