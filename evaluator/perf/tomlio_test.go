package perf

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestEncodeDecodePairsRoundTrip(t *testing.T) {
	t.Parallel()
	pairs, err := Fit(realRows(t), DefaultMixedPenalty)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := EncodePairs(&buf, pairs); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "[[perf]]"); n != len(pairs) {
		t.Errorf("%d [[perf]] tables, want %d", n, len(pairs))
	}
	got, err := DecodePairs(&buf, "rt.toml")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, pairs) {
		t.Error("pairs differ after a round trip through TOML")
	}
}

func TestDecodePairsErrors(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := EncodePairs(&buf, []Pair{validPair()}); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	tests := []struct {
		name, in string
		want     []string
	}{
		{"unknown pair key", strings.Replace(good, "tp = 8", "tp = 8\nflavour = 1", 1), []string{"x.toml", "unknown key", "perf.flavour"}},
		{"unknown top key", "colour = 2\n" + good, []string{"unknown key", "colour"}},
		{"syntax", good + "\n[[perf]\n", []string{"x.toml", "line"}},
		{"wrong type", strings.Replace(good, "tp = 8", `tp = "eight"`, 1), []string{"x.toml", "tp"}},
		{"invalid pair", strings.Replace(good, "tp = 8", "tp = -8", 1), []string{"x.toml", "[[perf]] #1", "m/hw/tp-8", "tp"}},
		{"duplicate pair", good + "\n" + strings.Replace(good, `hardware = "hw"`, `hardware = "HW"`, 1), []string{"[[perf]] #2", "given twice"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodePairs(strings.NewReader(tt.in), "x.toml")
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	if p, err := DecodePairs(strings.NewReader(""), "empty.toml"); err != nil || len(p) != 0 {
		t.Errorf("empty document: %v, %v", p, err)
	}
}

func FuzzDecodePairs(f *testing.F) {
	var buf bytes.Buffer
	if err := EncodePairs(&buf, []Pair{validPair()}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.String())
	buf.Reset()
	if err := EncodePairs(&buf, Builtin().Pairs[:1]); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.String())
	f.Add("")
	f.Add("[[perf]]\nmodel = 1\n")
	f.Add("[[perf]]\ntp = -1\nprompt_tokens = [1e400]\n")
	f.Add("perf = 3")
	f.Fuzz(func(t *testing.T, in string) {
		pairs, err := DecodePairs(strings.NewReader(in), "fuzz.toml")
		if err != nil {
			return
		}
		for i := range pairs {
			if err := pairs[i].Validate(); err != nil {
				t.Fatalf("decoded an invalid pair: %v", err)
			}
		}
		var out bytes.Buffer
		if err := EncodePairs(&out, pairs); err != nil {
			t.Fatal(err)
		}
		again, err := DecodePairs(&out, "again.toml")
		if err != nil {
			t.Fatalf("re-decoding: %v\n%s", err, out.String())
		}
		if len(pairs) > 0 && !reflect.DeepEqual(again, pairs) {
			t.Fatalf("round trip differs")
		}
	})
}
