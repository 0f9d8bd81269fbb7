package slo

import (
	"math"
	"strings"
	"testing"

	"splitplan/internal/fuzzing"
)

// FuzzParseKey: ParseKey never panics; it returns a valid metric and a
// percentile in (0, 100], and the target's Key reads back as the same
// metric and percentile.
func FuzzParseKey(f *testing.F) {
	fuzzing.Seed(f, "itl_p99", "TTFT_P99.9", "tpot_p90", " e2e_p50 ", "queue_p100", "ttft_p0", "ttft_p100.0001", "ttft_pNaN",
		"ttft_pInf", "ttft_p1e-320", "goodputmiss_p90", "goodput_p90", "_p", "ttft", "")
	f.Fuzz(func(t *testing.T, key string) {
		m, p, err := ParseKey(key)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "slo:") {
				t.Fatalf("error not in the package's style: %v", err)
			}
			return
		}
		if !m.valid() || !(p > 0 && p <= 100) || math.IsNaN(p) {
			t.Fatalf("ParseKey(%q) = %v, %v", key, m, p)
		}
		k := Target{Metric: m, Percentile: p}.Key()
		if m2, p2, err := ParseKey(k); err != nil || m2 != m || p2 != p {
			t.Fatalf("ParseKey(%q) = %v, %v, whose key %q reads as %v, %v, %v", key, m, p, k, m2, p2, err)
		}
	})
}

// FuzzParseSet: ParseSet never panics; a spec it accepts has targets,
// none twice, each a valid metric at a percentile in (0, 100] with no
// limit or a positive default factor, and the default drain rise.
func FuzzParseSet(f *testing.F) {
	fuzzing.Seed(f, "paper", "TOKENS", " goodput ", "ttft_p99,itl_p99,stall_p90", "ttft_p99,ttft_p99", "ttft_p99,tpot_p99,tbt_p99",
		"queue_p99", "ttft_p99,", ",", "ttft_p99.9,ttft_p99.90", "fast", "")
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := ParseSet(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "slo:") {
				t.Fatalf("error not in the package's style: %v", err)
			}
			return
		}
		if len(spec.Targets) == 0 || spec.DrainRiseS != 2 {
			t.Fatalf("ParseSet(%q) = %+v", s, spec)
		}
		seen := map[[2]float64]bool{}
		for _, tg := range spec.Targets {
			k := [2]float64{float64(tg.Metric), tg.Percentile}
			if seen[k] || !tg.Metric.valid() || !(tg.Percentile > 0 && tg.Percentile <= 100) || tg.Factor < 0 || math.IsNaN(tg.Factor) || tg.AbsoluteS != 0 {
				t.Fatalf("ParseSet(%q): target %+v", s, tg)
			}
			seen[k] = true
		}
	})
}
