package measured

import (
	"bytes"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"splitplan/internal/fuzzing"
)

// FuzzReadTOML: ReadTOML never panics, its errors name the file, and a
// calibration it accepts is valid, sorted, and writes back (WriteTOML) to
// a file that reads as the same calibration.
func FuzzReadTOML(f *testing.F) {
	if b, err := os.ReadFile("default_calibration.toml"); err == nil {
		// Its first entry (the whole file is slow to minimize), and that
		// entry with bad values.
		s := string(b)
		start := strings.Index(s, "[[calibration]]")
		if i := strings.Index(s[start+1:], "[[calibration]]"); start >= 0 && i > 0 {
			first := s[start : start+1+i]
			f.Add(first)
			f.Add(strings.Replace(first, "overhead_s = ", "overhead_s = -", 1))
			f.Add(strings.Replace(first, "wait_iterations = ", "wait_iterations = nan #", 1))
			f.Add(strings.Replace(first, "mape_ttft = ", "mape_ttft = -inf #", 1))
			f.Add(strings.Replace(first, "rows = ", "rows = -", 1))
			f.Add(first + first)
		}
	}
	fuzzing.Seed(f,
		"",
		"[[calibration]]\ngpu = \"h100_sxm\"\nengine = \"vllm\"\ncompute = 0.5\nmemory = 0.5\ncomm = 0.5\nflat_latency = 1e-5\n",
		"[[calibration]]\ngpu = \"h100_sxm\"\nengine = \"nope\"\n",
		"[[calibration]]\ngpu = \"\"\n",
		"[[host_speed]]\ngeneration = \"hopper\"\nfactor = 1.0\nrows = 3\n",
		"[[host_speed]]\ngeneration = \"hopper\"\nfactor = 9.0\n",
		"unknown = 1\n",
		"[[calibration\n",
	)
	f.Fuzz(func(t *testing.T, in string) {
		c, err := ReadTOML(strings.NewReader(in), "fuzz.toml")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.toml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted an invalid calibration: %v", err)
		}
		for i, e := range c.Entries {
			if e.Rows < 0 || !(e.MAPETTFT >= 0) || !(e.MAPETPOT >= 0) || math.IsInf(e.MAPETTFT, 0) || math.IsInf(e.MAPETPOT, 0) {
				t.Fatalf("entry %d: rows or MAPE not a count or percentage: %+v", i, e)
			}
			if i > 0 && (c.Entries[i-1].GPU > e.GPU || c.Entries[i-1].GPU == e.GPU && c.Entries[i-1].Engine > e.Engine) {
				t.Fatalf("entries not sorted: %+v", c.Entries)
			}
		}
		for i, h := range c.Hosts {
			if h.Rows < 0 {
				t.Fatalf("host_speed %d: rows not a count: %+v", i, h)
			}
		}
		var buf bytes.Buffer
		if err := c.WriteTOML(&buf); err != nil {
			t.Fatalf("accepted calibration does not write: %v", err)
		}
		again, err := ReadTOML(bytes.NewReader(buf.Bytes()), "rewritten.toml")
		if err != nil {
			t.Fatalf("rewritten calibration does not read: %v\n%s", err, buf.String())
		}
		if !reflect.DeepEqual(again, c) {
			t.Fatalf("rewritten calibration read back as\n%+v\nwant\n%+v", again, c)
		}
	})
}
