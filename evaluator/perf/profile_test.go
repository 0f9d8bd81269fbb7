package perf

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
)

const header = "model,hardware,prompt_size,batch_size,token_size,peak_power,average_power,prompt_time,token_time,e2e_time,tensor_parallel\n"

func TestReadProfile(t *testing.T) {
	t.Parallel()
	rows, err := ReadProfile(strings.NewReader(header+
		"m,hw,512,2,128,1.0,0.7,200,50,7000,8\n"+
		"m,hw,128,1,256,,,100,40,,4\n"), "x.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := []ProfileRow{
		{Model: "m", Hardware: "hw", TP: 8, PromptSize: 512, BatchSize: 2, TokenSize: 128,
			PromptTime: 0.2, TokenTime: 0.05, E2ETime: 7, PeakPower: 1, AveragePower: 0.7},
		{Model: "m", Hardware: "hw", TP: 4, PromptSize: 128, BatchSize: 1, TokenSize: 256,
			PromptTime: 0.1, TokenTime: 0.04},
	}
	if len(rows) != len(want) {
		t.Fatalf("got %d rows, want %d", len(rows), len(want))
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, rows[i], want[i])
		}
	}
}

func TestReadProfileColumnsInAnyOrder(t *testing.T) {
	t.Parallel()
	rows, err := ReadProfile(strings.NewReader(
		"token_time,prompt_time,model,hardware,tensor_parallel,token_size,batch_size,prompt_size,extra\n"+
			"50,200,m,hw,8,128,2,512,whatever\n"), "x.csv")
	if err != nil {
		t.Fatal(err)
	}
	if r := rows[0]; r.PromptSize != 512 || r.BatchSize != 2 || r.TokenSize != 128 || r.TP != 8 || r.TokenTime != 0.05 {
		t.Errorf("got %+v", r)
	}
}

func TestReadProfileErrors(t *testing.T) {
	t.Parallel()
	row := func(s string) string { return header + s + "\n" }
	tests := []struct {
		name, in string
		want     []string
	}{
		{"empty", "", []string{"x.csv", "empty file", "header"}},
		{"header only", header, []string{"x.csv", "no data rows"}},
		{"missing columns", "model,hardware,prompt_size\nm,h,1\n", []string{"x.csv:1", "batch_size", "token_time", "tensor_parallel"}},
		{"not a number", row("m,hw,512,2,128,1,1,abc,50,1,8"), []string{"x.csv:2", "column 8 (prompt_time)", "number of milliseconds from 0.001", `"abc"`}},
		{"zero time", row("m,hw,512,2,128,1,1,200,0,1,8"), []string{"x.csv:2", "token_time", "from 0.001 (a microsecond)"}},
		{"time under a microsecond", row("m,hw,512,2,128,1,1,1e-300,50,1,8"), []string{"x.csv:2", "column 8 (prompt_time)", `"1e-300"`}},
		{"power fraction too small", row("m,hw,512,2,128,1e-300,1,200,50,1,8"), []string{"x.csv:2", "peak_power", "a fraction of board power from 0.01 to 2"}},
		{"power fraction too large", row("m,hw,512,2,128,1,5,200,50,1,8"), []string{"x.csv:2", "average_power", "a fraction of board power"}},
		{"negative size", row("m,hw,-512,2,128,1,1,200,50,1,8"), []string{"x.csv:2", "column 3 (prompt_size)", "positive integer"}},
		{"fractional batch", row("m,hw,512,2.5,128,1,1,200,50,1,8"), []string{"batch_size", "positive integer"}},
		{"zero tp", row("m,hw,512,2,128,1,1,200,50,1,0"), []string{"tensor_parallel", "positive integer"}},
		{"empty model", row(",hw,512,2,128,1,1,200,50,1,8"), []string{"column 1 (model)", "a name"}},
		{"nan time", row("m,hw,512,2,128,1,1,NaN,50,1,8"), []string{"prompt_time"}},
		{"inf time", row("m,hw,512,2,128,1,1,200,+Inf,1,8"), []string{"token_time"}},
		{"bad optional", row("m,hw,512,2,128,x,1,200,50,1,8"), []string{"peak_power", "non-negative"}},
		{"short row", header + "m,hw,512,2,128,1,1,200,50,1,8\nm,hw,512\n", []string{"x.csv:3", "number of fields"}},
		{"second row bad", header + "m,hw,512,2,128,1,1,200,50,1,8\nm,hw,512,2,128,1,1,200,50,1,eight\n", []string{"x.csv:3", "column 11 (tensor_parallel)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadProfile(strings.NewReader(tt.in), "x.csv")
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
}

func TestReadProfileFileMissing(t *testing.T) {
	t.Parallel()
	if _, err := ReadProfileFile("testdata/no-such-file.csv"); err == nil || !strings.Contains(err.Error(), "no-such-file.csv") {
		t.Errorf("err = %v", err)
	}
}

func TestReadRealProfile(t *testing.T) {
	t.Parallel()
	rows := realRows(t)
	if len(rows) != 1260 {
		t.Errorf("got %d rows, want 1260", len(rows))
	}
	if r := rows[0]; r.Model != "llama2-70b" || r.Hardware != "a100-80gb" || r.TP != 2 || math.Abs(r.PromptTime-0.1962532191537321) > 1e-15 {
		t.Errorf("first row %+v", r)
	}
}

func FuzzReadProfile(f *testing.F) {
	f.Add(header + "m,hw,512,2,128,1.0,0.7,200,50,7000,8\n")
	f.Add(header + "m,hw,512,1,128,,,200,50,,8\nm,hw,1024,1,128,,,300,51,,8\nm,hw,512,4,256,,,250,60,,8\nn,hw,512,4,256,,,250,60,,2\n")
	f.Add(header)
	f.Add("")
	f.Add("model,hardware\nm,h\n")
	f.Add(header + "m,hw,512,2,128,1,1,abc,50,1,8\n")
	f.Add(header + "m,hw,9223372036854775807,9223372036854775807,1,1,1,1e-300,1e300,1,1\n")
	f.Add(header + "\"m,hw,512\n")
	f.Add(header + "M,hw,512,1,128,,,200,50,,8\nm,HW,512,1,128,,,210,51,,8\n")
	f.Fuzz(func(t *testing.T, in string) {
		rows, err := ReadProfile(strings.NewReader(in), "fuzz.csv")
		if err != nil {
			if rows != nil {
				t.Fatal("rows with an error")
			}
			return
		}
		if len(rows) == 0 {
			t.Fatal("no rows and no error")
		}
		for _, r := range rows {
			if r.Model == "" || r.Hardware == "" || r.TP < 1 || r.PromptSize < 1 || r.BatchSize < 1 || r.TokenSize < 1 {
				t.Fatalf("invalid row %+v", r)
			}
			for _, v := range []float64{r.PromptTime, r.TokenTime} {
				if !(v >= minProfileMillis/1e3*(1-1e-12)) || math.IsInf(v, 0) {
					t.Fatalf("invalid time in %+v", r)
				}
			}
			for _, v := range []float64{r.PeakPower, r.AveragePower} {
				if v != 0 && (v < minPowerFraction || v > maxPowerFraction) {
					t.Fatalf("power fraction beyond its bounds in %+v", r)
				}
			}
		}
		// Any rows ReadProfile accepts can be fitted, and the fit is valid
		// and answers positive finite times.
		pairs, err := Fit(rows, DefaultMixedPenalty)
		if err != nil {
			t.Fatalf("Fit: %v", err)
		}
		var buf bytes.Buffer
		if err := EncodePairs(&buf, pairs); err != nil {
			t.Fatal(err)
		}
		if again, err := DecodePairs(&buf, "fit.toml"); err != nil || !reflect.DeepEqual(again, pairs) {
			t.Fatalf("the fit does not round-trip through TOML: %v", err)
		}
		for i := range pairs {
			for k, m := range bothModels(&pairs[i]) {
				for _, v := range []float64{
					first(m.PromptTime(1)), first(m.PromptTime(5000)),
					first(m.DecodeTime(1, 100)), first(m.DecodeTime(300, 1e7)),
					first(m.MixedTime(100, 10, 1000)),
				} {
					if !(v > 0) || math.IsInf(v, 0) {
						t.Fatalf("pair %s, model %d (1: compat), answered %v", pairs[i].Name(), k, v)
					}
				}
			}
		}
	})
}

func first(v float64, _ bool) float64 { return v }
