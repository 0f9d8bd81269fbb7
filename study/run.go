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

// Run runs the jobs not yet verified in dir, writing each result atomically
// (a temporary file renamed into place), and returns how many it ran. A
// cancelled context stops it between or during jobs without leaving a
// partial result file; running again resumes.
func Run(ctx context.Context, dir string, jobs []Job, run Runner, progress func(done, total int)) (int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	ran := 0
	for k, j := range jobs {
		if progress != nil {
			progress(k, len(jobs))
		}
		if _, ok := Verified(ResultPath(dir, j)); ok {
			continue
		}
		if err := ctx.Err(); err != nil {
			return ran, err
		}
		out, err := run(ctx, j)
		if err != nil {
			return ran, fmt.Errorf("job %s: %w", j.Key, err)
		}
		if err := ctx.Err(); err != nil {
			return ran, err
		}
		if err := writeAtomic(ResultPath(dir, j), out); err != nil {
			return ran, err
		}
		ran++
	}
	if progress != nil {
		progress(len(jobs), len(jobs))
	}
	return ran, nil
}

func writeAtomic(path string, body []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	_, err = tmp.Write(append(append([]byte{}, body...), []byte(trailer+hex.EncodeToString(sum[:])+"\n")...))
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
// the axes as leading columns (named axis_NAME), rows in job order, and the keys of the jobs
// whose results are missing or do not verify. The output depends only on
// the jobs and their results, not on how they were sharded.
func Merge(dir string, jobs []Job, axes []string) ([]byte, []string, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	var header []string
	var missing []string
	for _, j := range jobs {
		body, ok := Verified(ResultPath(dir, j))
		if !ok {
			missing = append(missing, j.Key)
			continue
		}
		recs, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
		if err != nil || len(recs) == 0 {
			return nil, nil, fmt.Errorf("%s: %v", ResultPath(dir, j), err)
		}
		if header == nil {
			header = []string{"job"}
			for _, a := range axes {
				header = append(header, "axis_"+a)
			}
			header = append(header, recs[0]...)
			if err := w.Write(header); err != nil {
				return nil, nil, err
			}
		} else if strings.Join(recs[0], ",") != strings.Join(header[1+len(axes):], ",") {
			return nil, nil, fmt.Errorf("%s: columns differ from the other results", ResultPath(dir, j))
		}
		for _, r := range recs[1:] {
			row := []string{j.Key}
			for _, a := range axes {
				row = append(row, j.Axes[a])
			}
			if err := w.Write(append(row, r...)); err != nil {
				return nil, nil, err
			}
		}
	}
	w.Flush()
	return buf.Bytes(), missing, w.Error()
}
