package traces

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestReadFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want []Request
	}{
		{"testdata/azure_small.csv", []Request{
			{0, 0, 4808, 10},
			{1, 0.052, 3180, 8},
			{2, 1.02004, 110, 27},
			{3, 1.52004, 7433, 14},
		}},
		{"testdata/splitwise_small.csv", []Request{
			// Arrivals 0.125, 0.5, 0.5, 27.5 in the file, from the first.
			{0, 0, 512, 64},
			{1, 0.375, 1024, 1},
			{2, 0.375, 3, 300},
			{3, 27.375, 2048, 128},
		}},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			got, err := ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d requests, want %d", len(got), len(tt.want))
			}
			for i, w := range tt.want {
				g := got[i]
				if g.ID != w.ID || g.PromptTokens != w.PromptTokens || g.OutputTokens != w.OutputTokens ||
					math.Abs(g.Arrival-w.Arrival) > 1e-9 {
					t.Errorf("request %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestReadFileMissing(t *testing.T) {
	t.Parallel()
	_, err := ReadFile("testdata/no-such-file.csv")
	if err == nil || !strings.Contains(err.Error(), "no-such-file.csv") {
		t.Fatalf("err = %v, want one naming the file", err)
	}
}

const (
	az = AzureHeader + "\n"
	sw = SplitwiseHeader + "\n"
)

func TestReadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		in     string
		line   int
		column string
		want   []string // substrings of the message
	}{
		{"empty", "", 1, "", []string{"empty file", "TIMESTAMP,ContextTokens,GeneratedTokens", "request_id"}},
		{"blank lines only", "\n \r\n", 2, "", []string{"empty file"}},
		{"azure header only", az, 1, "", []string{"no requests"}},
		{"splitwise header only", sw + "\n", 2, "", []string{"no requests"}},
		{"wrong header", "time,prompt,output\n1,2,3\n", 1, "", []string{"unknown header", `"time,prompt,output"`, "expected"}},
		{"header missing a column", "TIMESTAMP,ContextTokens\n", 1, "", []string{"unknown header"}},
		{"header extra column", AzureHeader + ",x\n", 1, "", []string{"unknown header"}},
		{"azure missing field", az + "2023-11-16 18:17:03.9799600,4808,10\n2023-11-16 18:17:04,5\n", 3, "GeneratedTokens",
			[]string{"missing", "expected 3 fields", "got 2"}},
		{"azure extra field", az + "2023-11-16 18:17:03.9799600,4808,10,4\n", 2, "", []string{"expected 3 fields", "got 4"}},
		{"azure bad timestamp", az + "yesterday,4808,10\n", 2, "TIMESTAMP", []string{`"yesterday" is not a timestamp`, "2023-11-16 18:17:03.9799600"}},
		{"azure prompt not a number", az + "2023-11-16 18:17:03.9799600,abc,10\n", 2, "ContextTokens", []string{`"abc" is not a whole number`}},
		{"azure prompt fractional", az + "2023-11-16 18:17:03.9799600,12.5,10\n", 2, "ContextTokens", []string{`"12.5" is not a whole number`}},
		{"azure prompt empty", az + "2023-11-16 18:17:03.9799600,,10\n", 2, "ContextTokens", []string{"empty", "whole number"}},
		{"azure output zero", az + "2023-11-16 18:17:03.9799600,4808,0\n", 2, "GeneratedTokens", []string{"at least 1, got 0"}},
		{"azure prompt negative", az + "2023-11-16 18:17:03.9799600,-3,10\n", 2, "ContextTokens", []string{"at least 1, got -3"}},
		{"azure too large", az + "2023-11-16 18:17:03.9799600,99999999999999999999999,10\n", 2, "ContextTokens", []string{"too large"}},
		{"azure backwards", az + "2023-11-16 18:17:03.9799600,4808,10\n\n2023-11-16 18:17:03.5,1,1\n", 4, "TIMESTAMP",
			[]string{"timestamp 2023-11-16 18:17:03.5 goes backwards", "previous row 2023-11-16 18:17:03.9799600"}},
		{"splitwise missing fields", sw + "0,2,0,0.5,1\n", 2, "prompt_size", []string{"missing", "expected 7 fields", "got 5"}},
		{"splitwise bad id", sw + "x,2,0,0.5,1,10,10\n", 2, "request_id", []string{`"x" is not a whole number`}},
		{"splitwise negative type", sw + "0,-2,0,0.5,1,10,10\n", 2, "request_type", []string{"negative"}},
		{"splitwise bad batch", sw + "0,2,0,0.5,one,10,10\n", 2, "batch_size", []string{`"one" is not a whole number`}},
		{"splitwise bad arrival", sw + "0,2,0,soon,1,10,10\n", 2, "arrival_timestamp", []string{`"soon" is not a number of seconds`}},
		{"splitwise NaN arrival", sw + "0,2,0,NaN,1,10,10\n", 2, "arrival_timestamp", []string{"not a number of seconds"}},
		{"splitwise negative arrival", sw + "0,2,0,-1,1,10,10\n", 2, "arrival_timestamp", []string{"must not be negative"}},
		{"splitwise epoch microseconds", sw + "0,2,0,1.7e9,1,10,10\n1,2,0,1700000000000000.5,1,10,10\n", 3, "arrival_timestamp", []string{"too large to resolve a millisecond", "epoch seconds"}},
		{"splitwise 1e300", sw + "0,2,0,1e300,1,10,10\n", 2, "arrival_timestamp", []string{"too large to resolve a millisecond"}},
		{"splitwise at the bound", sw + "0,2,0,8796093022208,1,10,10\n", 2, "arrival_timestamp", []string{"too large"}},
		{"splitwise backwards", sw + "0,2,0,5,1,10,10\n1,2,0,4.5,1,10,10\n", 3, "arrival_timestamp",
			[]string{"timestamp 4.5 goes backwards (previous row 5)"}},
		{"splitwise prompt zero", sw + "0,2,0,5,1,0,10\n", 2, "prompt_size", []string{"at least 1, got 0"}},
		{"splitwise output not a number", sw + "0,2,0,5,1,10,1e3\n", 2, "token_size", []string{`"1e3" is not a whole number`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reqs, err := Read(strings.NewReader(tt.in), "trace.csv")
			if err == nil {
				t.Fatalf("no error; got %d requests", len(reqs))
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not a *ParseError", err, err)
			}
			if pe.File != "trace.csv" || pe.Line != tt.line || pe.Column != tt.column {
				t.Errorf("error at %s:%d column %q, want trace.csv:%d column %q (%v)", pe.File, pe.Line, pe.Column, tt.line, tt.column, err)
			}
			msg := err.Error()
			prefix := "trace.csv:" + itoa(tt.line) + ": "
			if tt.column != "" {
				prefix += "column " + tt.column + ": "
			}
			if !strings.HasPrefix(msg, prefix) {
				t.Errorf("message %q does not start with %q", msg, prefix)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestReadLenient(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want int
	}{
		{"BOM and CRLF", "\ufeff" + strings.ReplaceAll(az+"2023-11-16 18:17:03,1,1\n", "\n", "\r\n"), 1},
		{"header case and blanks", "timestamp, contexttokens ,GeneratedTokens\n2023-11-16 18:17:03,1,1\n", 1},
		{"no final newline and blank lines", az + "\n2023-11-16 18:17:03,1,1\n\n2023-11-16 18:17:03,2,2", 2},
		{"equal timestamps", sw + "0,2,0,1,1,10,10\n1,2,0,1,1,10,10\n", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reqs, err := Read(strings.NewReader(tt.in), "x.csv")
			if err != nil {
				t.Fatal(err)
			}
			if len(reqs) != tt.want {
				t.Fatalf("got %d requests, want %d", len(reqs), tt.want)
			}
		})
	}
}

// realTrace returns the path of a real trace, skipping the test if the
// shared data directory is missing.
func realTrace(t testing.TB, file string) string {
	t.Helper()
	dir := filepath.Join("..", "..", "shared", "data", "azure-llm-2023")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("real traces not available: %v", err)
	}
	return filepath.Join(dir, file)
}

func TestReadRealTraces(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file, workload           string
		requests                 int
		promptP50, outputP50     float64
		promptP90Lo, promptP90Hi float64
		outputP90Lo, outputP90Hi float64
	}{
		{"AzureLLMInferenceTrace_code.csv", "coding", 8819, 1469, 13, 5180, 5190, 54, 56},
		{"AzureLLMInferenceTrace_conv.csv", "conversation", 19366, 1020, 129, 2730, 2740, 423, 425},
	}
	for _, tt := range tests {
		t.Run(tt.workload, func(t *testing.T) {
			reqs, err := ReadFile(realTrace(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			s := Summarize(reqs)
			if s.Requests != tt.requests || s.Prompt.P50 != tt.promptP50 || s.Output.P50 != tt.outputP50 {
				t.Errorf("stats %+v, want %d requests, P50 %v / %v", s, tt.requests, tt.promptP50, tt.outputP50)
			}
			if s.Prompt.P90 < tt.promptP90Lo || s.Prompt.P90 > tt.promptP90Hi || s.Output.P90 < tt.outputP90Lo || s.Output.P90 > tt.outputP90Hi {
				t.Errorf("P90 %v / %v out of range", s.Prompt.P90, s.Output.P90)
			}
			if reqs[0].Arrival != 0 || s.DurationS < 3000 || s.DurationS > 3700 {
				t.Errorf("first arrival %v, duration %v s; want 0 and about an hour", reqs[0].Arrival, s.DurationS)
			}
			// The embedded distribution records the same statistics.
			d, err := Builtin(tt.workload)
			if err != nil {
				t.Fatal(err)
			}
			if d.Stats() != s {
				t.Errorf("embedded stats %+v differ from the trace's %+v: run go generate ./traces", d.Stats(), s)
			}
		})
	}
}

func BenchmarkReadConv(b *testing.B) {
	data, err := os.ReadFile(realTrace(b, "AzureLLMInferenceTrace_conv.csv"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	var n int
	for b.Loop() {
		reqs, err := Read(strings.NewReader(string(data)), "conv.csv")
		if err != nil {
			b.Fatal(err)
		}
		n = len(reqs)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "requests/s")
}

// TestSplitwiseArrivalBound checks MaxArrivalS against its definition:
// below it float64 resolves a millisecond, at it no longer.
func TestSplitwiseArrivalBound(t *testing.T) {
	t.Parallel()
	below := math.Nextafter(MaxArrivalS, 0)
	if s := MaxArrivalS - below; !(s < 1e-3) {
		t.Errorf("spacing just below MaxArrivalS is %g s, want < 1 ms", s)
	}
	if s := math.Nextafter(MaxArrivalS, math.Inf(1)) - MaxArrivalS; !(s >= 1e-3) {
		t.Errorf("spacing at MaxArrivalS is %g s, want >= 1 ms (the bound could be higher)", s)
	}
	// Epoch seconds are accepted and rebased: arrivals count from the first.
	in := SplitwiseHeader + "\n0,2,0,1700000000.25,1,10,10\n1,2,0,1700000000.5,1,10,10\n2,2,0,8796093022207,1,10,10\n"
	reqs, err := Read(strings.NewReader(in), "epoch.csv")
	if err != nil {
		t.Fatal(err)
	}
	if reqs[0].Arrival != 0 || reqs[1].Arrival != 0.25 {
		t.Errorf("arrivals %v, %v: want 0 and 0.25 (rebased to the first)", reqs[0].Arrival, reqs[1].Arrival)
	}
}

// TestParseAzureTime: the fast path reads what time.Parse reads, to the
// nanosecond, and leaves anything unusual to it.
func TestParseAzureTime(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	cases := []string{"2023-11-16 18:17:03.9799600", "2023-11-16 18:17:03", "2023-11-16 18:17:03.1",
		"2023-11-16 18:17:03.123456789", "2024-02-29 00:00:00.5", "2023-02-29 00:00:00", "2023-04-31 12:00:00",
		"2023-11-16 24:00:00", "2023-11-16 18:60:00", "2023-13-01 00:00:00", "2023-11-16 18:17:03.", "2023-11-16 18:17:03.1234567891",
		"2023-11-16T18:17:03", "2023-1-16 18:17:03", "x023-11-16 18:17:03", "2023-11-16 18:17:03.12a"}
	for i := 0; i < 2000; i++ {
		ts := time.Date(1990+rng.IntN(60), time.Month(1+rng.IntN(12)), 1+rng.IntN(31), rng.IntN(24), rng.IntN(60), rng.IntN(60), 0, time.UTC)
		frac := ""
		if d := rng.IntN(10); d > 0 {
			frac = "."
			for j := 0; j < d; j++ {
				frac += string(rune('0' + rng.IntN(10)))
			}
		}
		cases = append(cases, ts.Format("2006-01-02 15:04:05")+frac)
	}
	fast := 0
	for _, c := range cases {
		want, werr := time.Parse(azureParseLayout, c)
		got, ok := parseAzureTime(c)
		if ok {
			fast++
		}
		if ok && (werr != nil || !got.Equal(want) || got.Location() != want.Location()) {
			t.Errorf("%q: fast %v, time.Parse %v (%v)", c, got, want, werr)
		}
	}
	if fast < 2000 {
		t.Errorf("the fast path read only %d of %d timestamps", fast, len(cases))
	}
}
