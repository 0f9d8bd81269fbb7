// Package fuzzing helps the fuzz targets of splitplan's input readers:
// seeds from real files (Heads: the first lines of each file that exists,
// gunzipped when its name ends in .gz, so a seed corpus stays small and a
// clean clone without ../shared still runs the seeds as unit tests),
// adding them to a target's corpus (Seed), and the shape every target of
// a reader of rows shares (Rows).
package fuzzing

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Rows fuzzes a reader of rows: read reads an input; a read that fails
// must give an error that named accepts (it fails t otherwise: the error
// must name the input); one that succeeds must give rows, unless empty
// allows none, and check is asked of each row i (it fails t on a
// violation of the reader's promises).
func Rows[T any](f *testing.F, read func(t *testing.T, in string) ([]T, error), named func(t *testing.T, err error), empty bool, check func(t *testing.T, rows []T, i int)) {
	f.Fuzz(func(t *testing.T, in string) {
		rows, err := read(t, in)
		if err != nil {
			named(t, err)
			return
		}
		if len(rows) == 0 && !empty {
			t.Fatal("no error and no rows")
		}
		for i := range rows {
			check(t, rows, i)
		}
	})
}

// Seed adds each input to f's seed corpus, in order.
func Seed(f *testing.F, inputs ...string) {
	for _, s := range inputs {
		f.Add(s)
	}
}

// Heads returns the first n lines (with their line ends) of each file the
// glob patterns match; patterns matching nothing, and files that cannot be
// read, are skipped.
func Heads(n int, patterns ...string) []string {
	var out []string
	for _, p := range patterns {
		paths, _ := filepath.Glob(p)
		for _, path := range paths {
			if s, ok := head(path, n); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// head returns the first n lines of the file at path.
func head(path string, n int) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return "", false
		}
		defer zr.Close()
		r = zr
	}
	br := bufio.NewReader(r)
	var b strings.Builder
	for range n {
		line, err := br.ReadString('\n')
		b.WriteString(line)
		if err != nil {
			break
		}
	}
	return b.String(), b.Len() > 0
}
