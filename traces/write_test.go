package traces

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

func TestWriteSplitwiseRoundTrip(t *testing.T) {
	t.Parallel()
	for _, independent := range []bool{false, true} {
		reqs, err := Synthesize(mustBuiltin(t, "conversation"), 20, 300, 9, independent)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WriteSplitwise(&buf, reqs); err != nil {
			t.Fatal(err)
		}
		got, err := Read(&buf, "gen.csv")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(reqs) {
			t.Fatalf("read back %d requests, wrote %d", len(got), len(reqs))
		}
		for i, r := range reqs {
			g := got[i]
			want := r.Arrival - reqs[0].Arrival
			if g.ID != r.ID || g.PromptTokens != r.PromptTokens || g.OutputTokens != r.OutputTokens || math.Abs(g.Arrival-want) > 1e-9 {
				t.Fatalf("request %d read back as %+v, wrote %+v (arrival from the first %v)", i, g, r, want)
			}
		}
	}
}

func TestWriteAzureRoundTrip(t *testing.T) {
	t.Parallel()
	reqs, err := Synthesize(mustBuiltin(t, "coding"), 20, 300, 9, false)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2023, 11, 16, 18, 17, 3, 979960000, time.FixedZone("x", 3600))
	var buf bytes.Buffer
	if err := WriteAzure(&buf, reqs, start); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(strings.SplitN(buf.String(), "\n", 3)[1], ",")
	if want := start.Add(time.Duration(math.Round(reqs[0].Arrival*1e7)) * 100).Format(AzureTimeLayout); first != want {
		t.Errorf("first TIMESTAMP %q, want %q", first, want)
	}
	got, err := Read(&buf, "gen.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(reqs) {
		t.Fatalf("read back %d requests, wrote %d", len(got), len(reqs))
	}
	for i, r := range reqs {
		g := got[i]
		// Azure arrivals are measured from the first row.
		if g.ID != r.ID || g.PromptTokens != r.PromptTokens || g.OutputTokens != r.OutputTokens ||
			math.Abs(g.Arrival-(r.Arrival-reqs[0].Arrival)) > 1e-7 {
			t.Fatalf("request %d read back as %+v, wrote %+v", i, g, r)
		}
	}
}

func TestWriteErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		reqs []Request
		want string
	}{
		{"zero prompt", []Request{{0, 0, 0, 1}}, "prompt tokens 0"},
		{"zero output", []Request{{0, 0, 1, 0}}, "output tokens 0"},
		{"NaN arrival", []Request{{0, math.NaN(), 1, 1}}, "not a finite number"},
		{"backwards", []Request{{0, 2, 1, 1}, {1, 1, 1, 1}}, "before the previous"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, write := range []func() error{
				func() error { return WriteSplitwise(&bytes.Buffer{}, tt.reqs) },
				func() error { return WriteAzure(&bytes.Buffer{}, tt.reqs, time.Time{}) },
			} {
				if err := write(); err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err = %v, want one mentioning %q", err, tt.want)
				}
			}
		})
	}
	if err := WriteSplitwise(&bytes.Buffer{}, []Request{{0, -1, 1, 1}}); err == nil {
		t.Error("WriteSplitwise accepted a negative arrival")
	}
}
