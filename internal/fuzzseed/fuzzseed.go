// Package fuzzseed gives fuzz targets their seeds from real files: the
// first lines of each file that exists (gunzipped when its name ends in
// .gz), so a seed corpus stays small and a clean clone without
// ../shared still runs the seeds as unit tests.
package fuzzseed

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
)

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
