package traces

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// testProfiles are a step, a linear and a diurnal profile, with a zero
// step.
func testProfiles(t *testing.T) []*Profile {
	t.Helper()
	steps, err := newProfile("steps", []float64{0, 600, 1200, 2400}, []float64{30, 0, 100, 50}, false, 3000)
	if err != nil {
		t.Fatal(err)
	}
	linear, err := newProfile("linear", []float64{0, 1000, 1500, 3600}, []float64{10, 80, 80, 5}, true, 3600)
	if err != nil {
		t.Fatal(err)
	}
	diurnal, err := ParseDiurnal("diurnal:peak=100,trough=30,period=24h,phase=14h")
	if err != nil {
		t.Fatal(err)
	}
	return []*Profile{steps, linear, diurnal}
}

// TestProfileInverse: Time is the inverse of Requests, both are
// non-decreasing, over several periods.
func TestProfileInverse(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range testProfiles(t) {
		prev := -1.0
		for i := range 2000 {
			m := float64(i) / 2000 * 3 * p.mass
			tm := p.Time(m)
			if tm < prev {
				t.Fatalf("%s: Time(%v) = %v before %v", p.Name, m, tm, prev)
			}
			prev = tm
			if got := p.Requests(tm); math.Abs(got-m) > 1e-9*math.Max(1, m) {
				t.Fatalf("%s: Requests(Time(%v)) = %v", p.Name, m, got)
			}
		}
		for range 2000 {
			x := rng.Float64() * 3 * p.spanS
			if got := p.Time(p.Requests(x)); p.RateAt(x) > 0 && math.Abs(got-x) > 1e-6*math.Max(1, x) {
				t.Fatalf("%s: Time(Requests(%v)) = %v", p.Name, x, got)
			}
		}
	}
}

// TestProfileFigures: means, peaks and troughs by hand.
func TestProfileFigures(t *testing.T) {
	t.Parallel()
	ps := testProfiles(t)
	// steps: 30·600 + 0 + 100·1200 + 50·600 over 3000 s.
	for _, c := range []struct {
		p                  *Profile
		mean, peak, trough float64
	}{
		{ps[0], (30*600 + 100*1200 + 50*600) / 3000.0, 100, 0},
		{ps[1], (45*1000 + 80*500 + 42.5*2100) / 3600.0, 80, 5},
		{ps[2], 65, 100, 30},
	} {
		if math.Abs(c.p.Mean()-c.mean) > 1e-9*c.mean || c.p.Peak() != c.peak || math.Abs(c.p.Trough()-c.trough) > 1e-9 {
			t.Errorf("%s: mean %v peak %v trough %v, want %v %v %v", c.p.Name, c.p.Mean(), c.p.Peak(), c.p.Trough(), c.mean, c.peak, c.trough)
		}
	}
	d := ps[2]
	if r := d.RateAt(14 * 3600); math.Abs(r-100) > 1e-6 {
		t.Errorf("diurnal at its phase: %v req/s, want the peak 100", r)
	}
	if r := d.RateAt(2 * 3600); math.Abs(r-30) > 1e-3 {
		t.Errorf("diurnal 12 h after its peak: %v req/s, want the trough 30", r)
	}
}

// TestShapedArrivalsFollowTheProfile: per 10-minute bin, the arrivals of a
// diurnal day are the profile's expected count within 5 standard
// deviations, and their total within 1%.
func TestShapedArrivalsFollowTheProfile(t *testing.T) {
	t.Parallel()
	d, err := Builtin("coding")
	if err != nil {
		t.Fatal(err)
	}
	p := testProfiles(t)[2]
	reqs, _, err := SynthesizeArrivals(context.Background(), d, 20, 86400, 3, false, false, Arrivals{Profile: p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const bin = 600.0
	counts := make([]float64, 144)
	for i, r := range reqs {
		if i > 0 && r.Arrival < reqs[i-1].Arrival {
			t.Fatalf("arrival %d at %v before %v", i, r.Arrival, reqs[i-1].Arrival)
		}
		counts[int(r.Arrival/bin)]++
	}
	scale := 20 / p.Mean()
	for i, n := range counts {
		want := scale * (p.Requests(float64(i+1)*bin) - p.Requests(float64(i)*bin))
		if math.Abs(n-want) > 5*math.Sqrt(want) {
			t.Errorf("bin %d: %v arrivals, want %.1f ± %.1f", i, n, want, math.Sqrt(want))
		}
	}
	if n := float64(len(reqs)); math.Abs(n-20*86400) > 0.01*20*86400 {
		t.Errorf("%v arrivals in a day at a mean of 20 req/s", n)
	}
}

// TestBurstiness: the gaps of a constant-rate workload have the asked
// coefficient of variation and mean; CV 1 is Synthesize's Poisson
// workload, request for request.
func TestBurstiness(t *testing.T) {
	t.Parallel()
	d, err := Builtin("coding")
	if err != nil {
		t.Fatal(err)
	}
	for _, cv := range []float64{0.5, 2, 4} {
		reqs, _, err := SynthesizeArrivals(context.Background(), d, 50, 4000, 9, false, false, Arrivals{BurstCV: cv}, nil)
		if err != nil {
			t.Fatal(err)
		}
		gaps := make([]float64, len(reqs)-1)
		for i := range gaps {
			gaps[i] = reqs[i+1].Arrival - reqs[i].Arrival
		}
		m, sd := stat.MeanStdDev(gaps, nil)
		if math.Abs(m-1.0/50) > 0.05/50 || math.Abs(sd/m-cv) > 0.06*cv {
			t.Errorf("CV %v: gaps mean %v (want 0.02), CV %v", cv, m, sd/m)
		}
	}
	plain, err := Synthesize(d, 50, 100, 4, false)
	if err != nil {
		t.Fatal(err)
	}
	one, _, err := SynthesizeArrivals(context.Background(), d, 50, 100, 4, false, false, Arrivals{BurstCV: 1}, nil)
	if err != nil || len(one) != len(plain) || one[len(one)-1] != plain[len(plain)-1] {
		t.Errorf("CV 1 differs from Poisson: %v", err)
	}
}

// TestConstantProfileIsPoisson: a profile of one constant rate gives the
// Poisson workload's requests, arrivals within 1e-9 relative.
func TestConstantProfileIsPoisson(t *testing.T) {
	t.Parallel()
	d, err := Builtin("conversation")
	if err != nil {
		t.Fatal(err)
	}
	flat, err := newProfile("flat", []float64{0, 100}, []float64{7, 7}, false, 200)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Synthesize(d, 30, 500, 5, false)
	if err != nil {
		t.Fatal(err)
	}
	shaped, _, err := SynthesizeArrivals(context.Background(), d, 30, 500, 5, false, false, Arrivals{Profile: flat}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(shaped) < len(plain)-1 || len(shaped) > len(plain)+1 {
		t.Fatalf("%d requests, Poisson %d", len(shaped), len(plain))
	}
	for i := range min(len(plain), len(shaped)) {
		a, b := plain[i], shaped[i]
		if a.PromptTokens != b.PromptTokens || a.OutputTokens != b.OutputTokens || math.Abs(a.Arrival-b.Arrival) > 1e-9*a.Arrival {
			t.Fatalf("request %d: %+v, Poisson %+v", i, b, a)
		}
	}
}

// TestProfileInputs: files and specs with errors naming what to fix.
func TestProfileInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for body, want := range map[string]string{
		"time_s,rps\n0,10\n3600,20\n":         "",
		"rps,time_s\n5,0\n7,60\n9,120\n":      "",
		"t,rps\n0,1\n":                        "p.csv:1: expected a header naming the columns time_s and rps",
		"time_s,rps\n10,5\n20,5\n":            "p.csv:2: the first time_s is 10",
		"time_s,rps\n0,5\n0,6\n":              "p.csv:3: time_s 0 does not increase",
		"time_s,rps\n0,5\n60,-1\n":            "p.csv:3: rps \"-1\" is not a rate",
		"time_s,rps\n0,5\n":                   "at least two rows",
		"time_s,rps\n0,0\n60,0\n":             "every rate is 0",
		"time_s,rps\n0,5\n60,x\n":             "p.csv:3: rps \"x\"",
		"# hourly\ntime_s,rps\n0,1\n3600,2\n": "",
		"time_s,rps\n0,5\n60,6,7\n":           "p.csv:3: expected the header's 2 columns, got 3",
		"time_s,rps,note\n0,5,a\n60,6,b\n":    "",
		"time_s,rps\n0,5\n60\n":               "p.csv:3: expected the header's 2 columns, got 1",
		"time_s,rps\n0,5\n60,1e300\n":         "p.csv:3: rps \"1e300\" is beyond any service (at most 1e+06 req/s)",
		"time_s,rps\n0,5\n60,1000000\n":       "",
	} {
		path := filepath.Join(dir, "p.csv")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadProfileFile(path, false)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
	for spec, want := range map[string]string{
		"diurnal:peak=100,trough=30,period=24h":         "",
		"diurnal:peak=100,trough=30,period=24h,phase=2": "",
		"diurnal:peak=100,trough=300,period=24h":        "at least the trough",
		"diurnal:peak=100,period=24h":                   "missing trough",
		"diurnal:peak=100,trough=30,period=0s":          "period",
		"diurnal:peak=100,trough=30,period=1h,tilt=2":   "unknown key \"tilt\"",
		"diurnal:peak": "not KEY=VALUE",
		"diurnal:peak=100,trough=30,period=60s,phase=120s": "phase 2m is not shorter than the period 1m",
		"diurnal:peak=100,trough=30,period=60s,phase=60s":  "not shorter than the period",
		"diurnal:peak=1e300,trough=30,period=24h":          "peak 1e+300 req/s is beyond any service (at most 1e+06)",
	} {
		_, err := ParseDiurnal(spec)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: %v, want %q", spec, err, want)
		}
	}
	lin := filepath.Join(dir, "linear.csv")
	if err := os.WriteFile(lin, []byte("time_s,rps\n0,1\n3600,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := ReadProfileFile(lin, true); err != nil || p.SpanS() != 3600 || p.Mean() != 1.5 {
		t.Errorf("linear hourly file: %v, %v", p, err)
	}
	reqs := []Request{{Arrival: 0}, {Arrival: 10}, {Arrival: 3700}, {Arrival: 3800}, {Arrival: 3900}}
	p, err := ProfileFromArrivals("t.csv", reqs, 3600)
	if err != nil || p.RateAt(0) != 2.0/3600 || p.RateAt(4000) != 3.0/3600 || p.SpanS() != 7200 {
		t.Errorf("trace profile: %v %v", p, err)
	}
	if _, err := ProfileFromArrivals("t.csv", reqs[:2], 3600); err == nil || !strings.Contains(err.Error(), "shorter bin") {
		t.Errorf("one bin: %v", err)
	}
	if b, err := ParseTraceProfileSpec("trace:bin=5m"); err != nil || b != 300 {
		t.Errorf("trace:bin=5m: %v %v", b, err)
	}
}

// TestConstantProfileIsExactlyPoisson: a profile whose rate never
// changes gives, scaled to any mean, the Poisson workload at that rate,
// request for request and bit for bit.
func TestConstantProfileIsExactlyPoisson(t *testing.T) {
	t.Parallel()
	d, err := Builtin("coding")
	if err != nil {
		t.Fatal(err)
	}
	flat, err := newProfile("flat", []float64{0, 3600}, []float64{12, 12}, false, 7200)
	if err != nil {
		t.Fatal(err)
	}
	for _, rps := range []float64{12, 70} {
		plain, err := Synthesize(d, rps, 300, 8, false)
		if err != nil {
			t.Fatal(err)
		}
		shaped, _, err := SynthesizeArrivals(context.Background(), d, rps, 300, 8, false, false, Arrivals{Profile: flat}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(plain, shaped) {
			t.Errorf("at %v req/s a constant profile's workload differs from Poisson's", rps)
		}
	}
}

// TestArrivalsChiSquare: the hourly counts of a day of arrivals under a
// step profile pass a chi-square test of the profile's expected counts at
// the 1% level.
func TestArrivalsChiSquare(t *testing.T) {
	t.Parallel()
	d, err := Builtin("conversation")
	if err != nil {
		t.Fatal(err)
	}
	times, rates := make([]float64, 24), make([]float64, 24)
	for h := range times {
		times[h], rates[h] = float64(h)*3600, 2+float64((h*7)%11)
	}
	p, err := newProfile("hourly", times, rates, false, 86400)
	if err != nil {
		t.Fatal(err)
	}
	reqs, _, err := SynthesizeArrivals(context.Background(), d, 5, 86400, 11, false, false, Arrivals{Profile: p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]float64, 24)
	for _, r := range reqs {
		counts[int(r.Arrival/3600)]++
	}
	scale := 5 / p.Mean()
	chi2 := 0.0
	for h, n := range counts {
		want := scale * rates[h] * 3600
		chi2 += (n - want) * (n - want) / want
	}
	if limit := (distuv.ChiSquared{K: 24}).Quantile(0.99); chi2 > limit {
		t.Errorf("chi-square %.1f over 24 hours, above the 1%% level's %.1f", chi2, limit)
	}
}
