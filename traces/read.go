package traces

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"splitplan/internal/prefault"
)

// Header lines of the two trace formats Read understands.
const (
	// AzureHeader is the header of the Azure LLM inference trace format.
	AzureHeader = "TIMESTAMP,ContextTokens,GeneratedTokens"
	// SplitwiseHeader is the header of the SplitwiseSim request format.
	SplitwiseHeader = "request_id,request_type,application_id,arrival_timestamp,batch_size,prompt_size,token_size"
)

// AzureTimeLayout is the layout of the Azure trace's TIMESTAMP column, as
// written; Read accepts any number of fractional second digits.
const AzureTimeLayout = "2006-01-02 15:04:05.0000000"

// azureParseLayout accepts 0 to 9 fractional digits.
const azureParseLayout = "2006-01-02 15:04:05.999999999"

// MaxTokens is the largest prompt or output token count Read accepts.
const MaxTokens = 1 << 30

// ParseError describes a malformed trace: the file, the 1-based line and,
// when one is to blame, the column's name, with what was expected.
type ParseError struct {
	// File is the name given to Read, usually the path.
	File string
	// Line is the 1-based line number; the header is line 1.
	Line int
	// Column is the name of the offending column, or "" for a whole-line
	// problem.
	Column string
	// Msg says what was wrong and what was expected.
	Msg string
}

// Error formats the error as "file:line: column NAME: message".
func (e *ParseError) Error() string {
	if e.Column == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: column %s: %s", e.File, e.Line, e.Column, e.Msg)
}

// ReadFile reads the trace at path (see Read); errors name the path.
func ReadFile(path string) ([]Request, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading trace: %w", err)
	}
	defer f.Close()
	p := newParser(f, path)
	lines := -1
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		// Count the lines first (a pass through the read buffer only), so
		// the requests are allocated once at their size.
		if n, err := p.countLines(); err == nil {
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return nil, fmt.Errorf("reading %s: %w", path, err)
			}
			lines = n
		}
	}
	return p.read(lines)
}

// MaxArrivalS bounds a SplitwiseSim arrival_timestamp, in seconds: 2^43 s
// (about 8.8e12 s, 279,000 years). Below it the spacing of float64 is at
// most 2^-10 s (0.98 ms), so arrivals a millisecond apart stay apart; at
// 2^43 it is 2^-9 s (1.95 ms).
const MaxArrivalS = 1 << 43

// Read reads a trace in the Azure or the SplitwiseSim format, telling them
// apart by the header line. name identifies the input in error messages.
//
// Azure arrivals are the seconds since the first row's TIMESTAMP, so the
// first request arrives at 0; SplitwiseSim arrivals are arrival_timestamp
// minus the first row's, so they too start at 0 (a trace of epoch seconds
// reads as a trace of seconds from its start). An arrival_timestamp of
// MaxArrivalS or more is an error: float64 cannot tell its milliseconds
// apart (epoch microseconds or milliseconds taken for seconds). Requests get IDs 0, 1, 2, ... in file order (SplitwiseSim's
// request_id is checked but not kept). Blank lines are skipped, CRLF line
// ends and a UTF-8 byte order mark are accepted. Every malformed row is an
// error of type *ParseError: missing or extra fields, values that are not
// numbers, token counts below 1, arrivals going backwards, an empty file, a
// header without rows, an unknown header.
func Read(r io.Reader, name string) ([]Request, error) {
	return newParser(r, name).read(-1)
}

// read parses the whole input; lines is its number of lines when known
// (−1: unknown), to size the result.
func (p *parser) read(lines int) ([]Request, error) {
	header, ok := p.next()
	if p.err != nil {
		return nil, p.err
	}
	if !ok {
		p.line = max(p.line, 1)
		return nil, p.errf("", "empty file: expected a header line %q (Azure) or %q (SplitwiseSim)",
			AzureHeader, SplitwiseHeader)
	}
	var reqs []Request
	if lines > 0 {
		reqs = make([]Request, 0, lines)
		prefault.Slice(reqs) // each is written
	}
	var err error
	switch h := string(header); {
	case headerIs(h, AzureHeader):
		reqs, err = p.readAzure(reqs)
	case headerIs(h, SplitwiseHeader):
		reqs, err = p.readSplitwise(reqs)
	default:
		return nil, p.errf("", "unknown header %q: expected %q (Azure) or %q (SplitwiseSim)",
			clip(h), AzureHeader, SplitwiseHeader)
	}
	if err != nil {
		return nil, err
	}
	if p.err != nil {
		return nil, p.err
	}
	if len(reqs) == 0 {
		return nil, p.errf("", "no requests: the file has a header but no rows")
	}
	return reqs, nil
}

// headerIs compares a header line with want, ignoring case and blanks
// around the names.
func headerIs(line, want string) bool {
	for want != "" {
		var w, l string
		w, want, _ = strings.Cut(want, ",")
		var more bool
		l, line, more = strings.Cut(line, ",")
		if !strings.EqualFold(strings.TrimSpace(l), w) {
			return false
		}
		if !more && want != "" {
			return false
		}
	}
	return line == ""
}

// parser walks the lines of a trace through one read buffer, so that
// fields are slices of it and parsing allocates nothing per row and
// touches no more memory than the buffer and the requests.
type parser struct {
	r          io.Reader
	buf        []byte // buf[start:end] is read and not yet consumed
	eof        bool
	err        error // a read error, reported once the lines before it are parsed
	file       string
	line       int      // number of the line last returned by next
	fields     [][]byte // reused split of the current line
	start, end int
}

// readBufferBytes is the size of a parser's read buffer; it grows for a
// longer line.
const readBufferBytes = 64 << 10

func newParser(r io.Reader, name string) *parser {
	return &parser{r: r, file: name, buf: make([]byte, readBufferBytes)}
}

// fill reads more of the input after the unconsumed bytes, moved to the
// front of the buffer (grown when they fill it).
func (p *parser) fill() {
	n := copy(p.buf, p.buf[p.start:p.end])
	p.start, p.end = 0, n
	if n == len(p.buf) {
		p.buf = append(p.buf, make([]byte, len(p.buf))...)
	}
	m, err := p.r.Read(p.buf[n:])
	p.end += m
	if err == io.EOF {
		p.eof = true
	} else if err != nil {
		p.eof = true
		p.err = fmt.Errorf("reading %s: %w", p.file, err)
	}
}

// countLines counts the input's lines to its end (for a seekable input
// read again afterwards), as next will find them.
func (p *parser) countLines() (int, error) {
	lines, last := 0, byte('\n')
	for {
		m, err := p.r.Read(p.buf)
		lines += bytes.Count(p.buf[:m], newline)
		if m > 0 {
			last = p.buf[m-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if last != '\n' {
		lines++
	}
	return lines, nil
}

var (
	newline = []byte{'\n'}
	bom     = []byte("\ufeff")
)

// next returns the next non-blank line without its line end; the line is
// valid until the next call. It returns false at the end of the input or
// at a read error (p.err).
func (p *parser) next() ([]byte, bool) {
	for {
		var l []byte
		if i := bytes.IndexByte(p.buf[p.start:p.end], '\n'); i >= 0 {
			l = p.buf[p.start : p.start+i]
			p.start += i + 1
		} else if !p.eof {
			p.fill()
			continue
		} else if p.start < p.end {
			l = p.buf[p.start:p.end]
			p.start = p.end
		} else {
			return nil, false
		}
		if p.line == 0 {
			l = bytes.TrimPrefix(l, bom) // a UTF-8 byte order mark
		}
		p.line++
		l = bytes.TrimSuffix(l, []byte{'\r'})
		if len(bytes.TrimSpace(l)) != 0 {
			return l, true
		}
	}
}

func (p *parser) errf(col, format string, a ...any) *ParseError {
	return &ParseError{File: p.file, Line: p.line, Column: col, Msg: fmt.Sprintf(format, a...)}
}

// split splits line at commas into p.fields, checking it has one field per
// column of names.
func (p *parser) split(line []byte, names []string) error {
	p.fields = p.fields[:0]
	for {
		i := bytes.IndexByte(line, ',')
		if i < 0 {
			p.fields = append(p.fields, bytes.TrimSpace(line))
			break
		}
		p.fields = append(p.fields, bytes.TrimSpace(line[:i]))
		line = line[i+1:]
	}
	if n := len(p.fields); n < len(names) {
		return p.errf(names[n], "missing: expected %d fields (%s), got %d",
			len(names), strings.Join(names, ","), n)
	} else if n > len(names) {
		return p.errf("", "expected %d fields (%s), got %d", len(names), strings.Join(names, ","), n)
	}
	return nil
}

// tokens parses a token count: a whole number from 1 to MaxTokens.
func (p *parser) tokens(col string, s []byte) (int, error) {
	v, err := p.integer(col, s)
	if err != nil {
		return 0, err
	}
	if v < 1 {
		return 0, p.errf(col, "token count must be at least 1, got %d", v)
	}
	if v > MaxTokens {
		return 0, p.errf(col, "token count %d is too large (at most %d)", v, MaxTokens)
	}
	return int(v), nil
}

// integer parses a whole number, allowing a leading minus sign.
func (p *parser) integer(col string, s []byte) (int64, error) {
	neg := false
	d := s
	if len(d) > 0 && (d[0] == '-' || d[0] == '+') {
		neg = d[0] == '-'
		d = d[1:]
	}
	if len(d) == 0 {
		if len(s) == 0 {
			return 0, p.errf(col, "empty: expected a whole number")
		}
		return 0, p.errf(col, "%q is not a whole number", clip(string(s)))
	}
	var v int64
	for i := 0; i < len(d); i++ {
		c := d[i]
		if c < '0' || c > '9' {
			return 0, p.errf(col, "%q is not a whole number", clip(string(s)))
		}
		if v > 1<<50 {
			return 0, p.errf(col, "%q is too large", clip(string(s)))
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, nil
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

var azureColumns = strings.Split(AzureHeader, ",")

// parseAzureTime reads the common form of an Azure TIMESTAMP,
// "2006-01-02 15:04:05" with 0 to 9 fractional digits, as time.Parse
// with azureParseLayout does (in UTC), without its general layout
// machinery; ok is false for anything else (out-of-range fields
// included), which is left to time.Parse and its errors.
func parseAzureTime(s string) (t time.Time, ok bool) {
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	num := func(a, b int) int {
		v := 0
		for i := a; i < b; i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	year, month, day := num(0, 4), num(5, 7), num(8, 10)
	hour, minute, sec := num(11, 13), num(14, 16), num(17, 19)
	if year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return time.Time{}, false
	}
	if day > 28 && time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC).Day() != day {
		return time.Time{}, false // past the month's end
	}
	ns := 0
	if rest := s[19:]; rest != "" {
		if rest[0] != '.' || len(rest) < 2 || len(rest) > 10 {
			return time.Time{}, false
		}
		if ns = num(20, len(s)); ns < 0 {
			return time.Time{}, false
		}
		for i := len(rest) - 1; i < 9; i++ {
			ns *= 10
		}
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, ns, time.UTC), true
}

func (p *parser) readAzure(reqs []Request) ([]Request, error) {
	var first, prev time.Time
	var prevText []byte // the previous row's TIMESTAMP (the line is reused)
	for {
		line, ok := p.next()
		if !ok {
			return reqs, nil
		}
		if err := p.split(line, azureColumns); err != nil {
			return nil, err
		}
		f := p.fields
		var err error
		t, ok := parseAzureTime(string(f[0]))
		if !ok {
			t, err = time.Parse(azureParseLayout, string(f[0]))
		}
		if err != nil {
			return nil, p.errf(azureColumns[0], "%q is not a timestamp like 2023-11-16 18:17:03.9799600", clip(string(f[0])))
		}
		prompt, err := p.tokens(azureColumns[1], f[1])
		if err != nil {
			return nil, err
		}
		output, err := p.tokens(azureColumns[2], f[2])
		if err != nil {
			return nil, err
		}
		if len(reqs) == 0 {
			first = t
		} else if t.Before(prev) {
			return nil, p.errf(azureColumns[0], "timestamp %s goes backwards (previous row %s)", f[0], prevText)
		}
		d := t.Sub(first)
		if d == math.MaxInt64 {
			return nil, p.errf(azureColumns[0], "timestamp %s is too far (over 290 years) from the first row's", f[0])
		}
		prev, prevText = t, append(prevText[:0], f[0]...)
		reqs = append(reqs, Request{ID: len(reqs), Arrival: d.Seconds(), PromptTokens: prompt, OutputTokens: output})
	}
}

var splitwiseColumns = strings.Split(SplitwiseHeader, ",")

func (p *parser) readSplitwise(reqs []Request) ([]Request, error) {
	prev, first := 0.0, 0.0
	for {
		line, ok := p.next()
		if !ok {
			return reqs, nil
		}
		if err := p.split(line, splitwiseColumns); err != nil {
			return nil, err
		}
		f := p.fields
		for _, i := range []int{0, 1, 2, 4} {
			v, err := p.integer(splitwiseColumns[i], f[i])
			if err != nil {
				return nil, err
			}
			if v < 0 {
				return nil, p.errf(splitwiseColumns[i], "must not be negative, got %d", v)
			}
		}
		at, err := strconv.ParseFloat(string(f[3]), 64)
		if err != nil || math.IsNaN(at) || math.IsInf(at, 0) {
			return nil, p.errf(splitwiseColumns[3], "%q is not a number of seconds", clip(string(f[3])))
		}
		if at < 0 {
			return nil, p.errf(splitwiseColumns[3], "arrival must not be negative, got %s", f[3])
		}
		if at >= MaxArrivalS {
			return nil, p.errf(splitwiseColumns[3], "arrival %s s is too large to resolve a millisecond (float64 spacing there is %.3g s; expected seconds below %.4g, e.g. epoch seconds, not microseconds)",
				f[3], math.Nextafter(at, math.Inf(1))-at, float64(MaxArrivalS))
		}
		if len(reqs) > 0 && at < prev {
			return nil, p.errf(splitwiseColumns[3], "timestamp %s goes backwards (previous row %s)",
				f[3], strconv.FormatFloat(prev, 'g', -1, 64))
		}
		prompt, err := p.tokens(splitwiseColumns[5], f[5])
		if err != nil {
			return nil, err
		}
		output, err := p.tokens(splitwiseColumns[6], f[6])
		if err != nil {
			return nil, err
		}
		prev = at
		if len(reqs) == 0 {
			first = at
		}
		reqs = append(reqs, Request{ID: len(reqs), Arrival: at - first, PromptTokens: prompt, OutputTokens: output})
	}
}
