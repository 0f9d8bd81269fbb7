// Package gendata is what the generators of embedded tables share: finding
// a file of ../shared/data from wherever `go generate` runs, reading a CSV
// by column name with errors that name the file, line and column, writing
// a float so that it reads back the same, and writing a file (a gofmt'ed
// Go slice of values, or any bytes) through a temporary file.
package gendata

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"go/format"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Find returns rel (e.g. "shared/data/measured-serving/gpus.csv") as found
// in the working directory or its nearest parent that has it; flag names
// the generator's flag that gives the path instead.
func Find(rel, flag string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find " + rel + " in the working directory or a parent; pass -" + flag)
		}
		dir = parent
	}
}

// Record is one row of a CSV read by ReadCSV, read by column name. The
// first malformed field is kept as the record's error.
type Record struct {
	path string
	rec  []string
	col  map[string]int
	// Line is the record's line in the file.
	Line int
	err  error
}

// Str returns the column's field, trimmed.
func (r *Record) Str(c string) string { return strings.TrimSpace(r.rec[r.col[c]]) }

// Int returns the column's integer (0 for an empty field).
func (r *Record) Int(c string) int {
	s := r.Str(c)
	if s == "" {
		return 0
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		r.fail(c, "an integer or nothing", s)
	}
	return v
}

// Float returns the column's number (0 for an empty field).
func (r *Record) Float(c string) float64 {
	s := r.Str(c)
	if s == "" {
		return 0
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		r.fail(c, "a number or nothing", s)
	}
	return v
}

func (r *Record) fail(c, want, got string) {
	if r.err == nil {
		r.err = fmt.Errorf("%s:%d: column %s: expected %s, got %q", r.path, r.Line, c, want, got)
	}
}

// Err is the record's first malformed field, or nil.
func (r *Record) Err() error { return r.err }

// Errorf is an error about the record, naming its file and line.
func (r *Record) Errorf(format string, a ...any) error {
	return fmt.Errorf("%s:%d: %s", r.path, r.Line, fmt.Sprintf(format, a...))
}

// ReadCSV reads path, whose header must hold every one of columns, and
// calls row for each record in order; it stops at the first error.
func ReadCSV(path string, columns []string, row func(r *Record) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	header, err := cr.Read()
	if err != nil {
		return fmt.Errorf("%s: header: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	for _, c := range columns {
		if _, ok := col[c]; !ok {
			return fmt.Errorf("%s:1: header lacks column %s", path, c)
		}
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		line, _ := cr.FieldPos(0)
		if err := row(&Record{path: path, rec: rec, col: col, Line: line}); err != nil {
			return err
		}
	}
}

// WriteGo writes to out the Go file: header (comment lines, each ending in
// a newline), then `package pkg`, then `var name = []T{...}` holding items
// as %#v values with their type name (qualified, e.g. "hw.GPU") elided,
// formatted by gofmt.
func WriteGo[T any](out, header, pkg, name, qualified string, items []T) error {
	var b bytes.Buffer
	b.WriteString(header)
	fmt.Fprintf(&b, "package %s\n\n", pkg)
	unqualified := qualified[strings.LastIndexByte(qualified, '.')+1:]
	fmt.Fprintf(&b, "var %s = []%s{\n", name, unqualified)
	for _, it := range items {
		fmt.Fprintf(&b, "\t%#v,\n", it)
	}
	b.WriteString("}\n")
	src, err := format.Source(bytes.ReplaceAll(b.Bytes(), []byte(qualified+"{"), []byte("{")))
	if err != nil {
		return fmt.Errorf("formatting the output: %w", err)
	}
	return WriteFile(out, src)
}

// WriteFile writes data to path through a temporary file beside it, so an
// interrupted run leaves the previous file whole.
func WriteFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Float returns x in the shortest form that reads back to the same
// float64.
func Float(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
