package traces

import (
	"errors"
	"math"
	"strings"
	"testing"

	"splitplan/internal/fuzzing"
)

func FuzzRead(f *testing.F) {
	fuzzing.Seed(f,
		az+"2023-11-16 18:17:03.9799600,4808,10\n2023-11-16 18:17:04.03196,3180,8\n",
		az+"2023-11-16 18:17:03,1,1\r\n2023-11-16 18:17:03,2,2",
		az+"2023-11-16 18:17:03.9799600,0,10\n",
		az+"2023-11-16 18:17:04,1,1\n2023-11-16 18:17:03,1,1\n",
		az+"2023-11-16 18:17:03,1\n",
		az,
		sw+"0,2,0,0.125,1,512,64\n1,2,0,0.5,1,1024,1\n",
		sw+"0,2,0,5,1,10,10\n1,2,0,4.5,1,10,10\n",
		sw+"0,2,0,NaN,1,10,10\n",
		sw+"0,2,0,1e308,1,10,10\n",
		"",
		"a,b,c\n1,2,3\n",
		"\ufeff"+az+"2023-11-16 18:17:03,1,1\n",
	)
	f.Fuzz(func(t *testing.T, in string) {
		reqs, err := Read(strings.NewReader(in), "fuzz.csv")
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.File != "fuzz.csv" || pe.Line < 1 || !strings.HasPrefix(err.Error(), "fuzz.csv:") {
				t.Fatalf("error %v does not name the file and line", err)
			}
			if reqs != nil {
				t.Fatalf("error %v with %d requests", err, len(reqs))
			}
			return
		}
		if len(reqs) == 0 {
			t.Fatal("no error and no requests")
		}
		for i, r := range reqs {
			if r.ID != i || r.PromptTokens < 1 || r.OutputTokens < 1 || r.PromptTokens > MaxTokens || r.OutputTokens > MaxTokens ||
				math.IsNaN(r.Arrival) || math.IsInf(r.Arrival, 0) || r.Arrival < 0 || (i > 0 && r.Arrival < reqs[i-1].Arrival) {
				t.Fatalf("request %d violates the invariants: %+v", i, r)
			}
		}
	})
}
