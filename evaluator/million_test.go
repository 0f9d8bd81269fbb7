package evaluator_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"splitplan/evaluator"
)

// peakRSSKiB reads the process's peak resident set (VmHWM) on Linux.
func peakRSSKiB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			v, _ := strconv.ParseFloat(f[1], 64)
			return v
		}
	}
	return 0
}

// BenchmarkMillionRequests simulates 1,000,000 coding requests (70 req/s
// for about 4 hours) on Splitwise-HH 35P/5T keeping only what the SLO
// check reads (Options.LatenciesOnly, as searches do) and reports the
// process's peak RSS: the simulator keeps a request's state only while it
// is live, so memory grows with the trace and the 48-byte latency records,
// not with tokens or the full results.
func BenchmarkMillionRequests(b *testing.B) {
	reqs := workload(b, "coding", 70, 1e6/70, 1, false)
	cl := cluster(b, "HH", 35, 5, false)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := evaluator.Evaluate(cl.Sim(), reqs, evaluator.Options{LatenciesOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		if res.Completed != len(reqs) {
			b.Fatalf("%d of %d", res.Completed, len(reqs))
		}
	}
	b.ReportMetric(float64(len(reqs)), "requests")
	b.ReportMetric(peakRSSKiB()/1024, "peak-RSS-MiB")
}
