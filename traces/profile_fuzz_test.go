package traces

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"splitplan/internal/fuzzing"
)

// checkProfile fails t unless p has a positive finite period and mean, a
// finite peak at least its trough ≥ 0, and a finite time for the request
// halfway through a period, within it.
func checkProfile(t *testing.T, p *Profile) {
	t.Helper()
	span, mean, peak, trough := p.SpanS(), p.Mean(), p.Peak(), p.Trough()
	if !(span > 0) || math.IsInf(span, 0) || !(mean > 0) || math.IsInf(mean, 0) ||
		!(trough >= 0) || !(peak >= trough) || math.IsInf(peak, 0) {
		t.Fatalf("profile %s: period %v, mean %v, peak %v, trough %v: expected finite, positive", p.Name, span, mean, peak, trough)
	}
	if half := p.Time(p.mass / 2); !(half >= 0 && half <= span) {
		t.Fatalf("profile %s: half a period's requests arrive at %v, outside [0, %v]", p.Name, half, span)
	}
}

// FuzzParseDiurnal: ParseDiurnal never panics, its errors quote the
// spec, and a profile it accepts has finite, positive figures.
func FuzzParseDiurnal(f *testing.F) {
	fuzzing.Seed(f,
		"diurnal:peak=100,trough=20,period=24h",
		"diurnal:peak=100,trough=20,period=24h,phase=14h",
		"diurnal:peak=1,trough=1,period=1",
		"diurnal:peak=1e308,trough=0,period=24h",
		"diurnal:peak=1e306,trough=0,period=24h",
		"diurnal:peak=1e202,trough=0,period=01",
		"diurnal:peak=100,trough=0,period=1e300",
		"diurnal:peak=100,trough=20,period=5e-324",
		"diurnal:peak=NaN,trough=20,period=24h",
		"diurnal:peak=100,trough=200,period=24h",
		"diurnal:peak=100,trough=20,period=24h,phase=-1h",
		"diurnal:peak=100,peak=100,trough=20,period=24h",
		"diurnal:",
		"diurnal:peak",
		"",
	)
	f.Fuzz(func(t *testing.T, spec string) {
		p, err := ParseDiurnal(spec)
		if err != nil {
			if !strings.Contains(err.Error(), "diurnal") && !strings.Contains(err.Error(), spec) {
				t.Fatalf("error does not say what it read: %v", err)
			}
			return
		}
		checkProfile(t, p)
	})
}

// FuzzParseSeconds: ParseSeconds never panics and returns a finite
// number or an error.
func FuzzParseSeconds(f *testing.F) {
	fuzzing.Seed(f, "90s", "24h", "1.5", " 3600 ", "-5s", "1e308", "NaN", "Inf", "9999999999h", "5m30s", "", "s")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseSeconds(s)
		if err != nil {
			if v != 0 {
				t.Fatalf("error %v with %v", err, v)
			}
			return
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("ParseSeconds(%q) = %v", s, v)
		}
	})
}

// FuzzParseTraceProfileSpec: ParseTraceProfileSpec never panics, its
// errors quote the spec, and the bin it returns is a positive finite
// duration.
func FuzzParseTraceProfileSpec(f *testing.F) {
	fuzzing.Seed(f, "trace", "trace:bin=5m", "trace:bin=3600", "trace:bin=0", "trace:bin=-1h", "trace:bin=NaN", "trace:bin=1e308",
		"trace:bin=", "trace:", "trace:width=5m", "trac", "")
	f.Fuzz(func(t *testing.T, spec string) {
		bin, err := ParseTraceProfileSpec(spec)
		if err != nil {
			if !strings.Contains(err.Error(), "trace") {
				t.Fatalf("error does not say what it read: %v", err)
			}
			return
		}
		if !(bin > 0) || math.IsInf(bin, 0) {
			t.Fatalf("ParseTraceProfileSpec(%q) = %v", spec, bin)
		}
	})
}

// FuzzReadProfileFile: ReadProfileFile never panics, its errors name the
// file, and a profile it accepts has finite, positive figures.
func FuzzReadProfileFile(f *testing.F) {
	for _, s := range fuzzing.Heads(40, "../examples/day-hourly.csv", "../testdata/cli/inputs/profile-*.csv") {
		f.Add(s, false)
		f.Add(s, true)
	}
	for _, s := range []string{
		"time_s,rps\n0,40\n3600,60\n",
		"rps,time_s,note\n40,0,a\n60,3600,b\n",
		"# comment\n\ntime_s,rps\n0,0\n10,0\n",
		"time_s,rps\n0,1e308\n1e308,1e308\n",
		"time_s,rps\n0,1e308\n3600,1e308\n",
		"time_s,rps\n0,1\n1e300,1\n",
		"time_s,rps\n0,1\n5e-324,1\n",
		"time_s,rps\n0,NaN\n1,1\n",
		"time_s,rps\n1,1\n2,1\n",
		"time_s,rps\n0,1\n0,1\n",
		"time_s,rps\n0,1,2\n",
		"time,rate\n",
		"",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	// One folder for every input: a folder per input, with its random
	// name, makes the coverage differ from run to run and stalls the
	// fuzzer.
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in string, linear bool) {
		path := filepath.Join(dir, "profile.csv")
		if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := ReadProfileFile(path, linear)
		if err != nil {
			if !strings.HasPrefix(err.Error(), path) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		checkProfile(t, p)
	})
}

// TestProfileOverflow: a profile whose requests a period overflow is an
// error saying so (not "every rate is 0", which an infinite or NaN sum
// gave), one of rates beyond MaxProfileRPS is refused before, and one of
// rates whose square overflows (built directly: no file or diurnal spec
// reaches them) still inverts to finite times.
func TestProfileOverflow(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "wide.csv")
	if err := os.WriteFile(path, []byte("time_s,rps\n0,2\n1e200,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadProfileFile(path, true); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("a 1e200 s ramp: error %v, want one saying the requests a period overflow", err)
	}
	if _, err := ParseDiurnal("diurnal:peak=1e306,trough=0,period=24h"); err == nil || !strings.Contains(err.Error(), "beyond any service") {
		t.Errorf("peak 1e306 over a day: error %v, want one saying the rate is beyond any service", err)
	}
	if _, err := newProfile("wide", []float64{0, 1e200}, []float64{1.5e308, 1.5e308}, true, 1e200); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("rates of 1.5e308 over 1e200 s: error %v, want one saying the requests a period overflow", err)
	}
	p, err := newProfile("steep", []float64{0, 0.5, 1}, []float64{0, 1e202, 0}, true, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []float64{0.1, 0.5, 0.9} {
		if x := p.Time(f * p.mass); !(x >= 0 && x <= 1) {
			t.Errorf("peak 1e202: the request %g of the way through a period arrives at %v", f, x)
		}
	}
}
