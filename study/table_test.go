package study

import (
	"math"
	"strings"
	"testing"

	"splitplan/search"
)

const tableCSV = `job,axis_model,axis_rps,design,goal,cost_usd_per_h,power_kw,capacity_rps,feasible,kwh_per_day,ownership_usd_per_h
a,m1,10,X,cost,76,22,12,true,100,20
a,m1,10,Y,cost,38,11,10,true,90,19
a,m1,10,Z,cost,20,5,9,false,,
b,m1,20,X,cost,76,22,25,true,100,20
b,m1,20,Y,cost,76,11,21,true,90,19
c,m2,10,X,cost,,,,false,,
`

// TestOutcomes: each job's winner is its feasible design of best merit (the
// first of equals); a job with none feasible has no winner.
func TestOutcomes(t *testing.T) {
	t.Parallel()
	tb, err := ReadTable("t.csv", strings.NewReader(tableCSV))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(tb.Axes, ",") != "model,rps" || !tb.HasAxis("rps") || tb.HasAxis("design") {
		t.Fatalf("axes %v", tb.Axes)
	}
	outs, err := tb.Outcomes()
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 3 || outs[0].Winner != "Y" || outs[0].Merit != 38 || outs[1].Winner != "X" ||
		outs[2].Found || outs[1].Axes["rps"] != "20" || outs[0].Goal != search.GoalCost {
		t.Fatalf("outcomes %+v", outs)
	}
	// Other goals read their own column: power, energy, throughput, batch.
	for goal, want := range map[string]struct {
		winner string
		merit  float64
	}{"power": {"Y", 11}, "energy": {"Y", 90}, "tco": {"Y", 19}, "throughput": {"X", 12}, "batch": {"Y", 10.0 / 38}} {
		tb, _ := ReadTable("t.csv", strings.NewReader(strings.ReplaceAll(tableCSV, ",cost,", ","+goal+",")))
		outs, err := tb.Outcomes()
		if err != nil || outs[0].Winner != want.winner || math.Abs(outs[0].Merit-want.merit) > 1e-12 {
			t.Errorf("%s: %+v %v, want %v", goal, outs[0], err, want)
		}
	}
	if outs[0].Row != 2 || outs[1].Row != 5 || outs[2].Row != 7 {
		t.Errorf("rows %d, %d, %d, want 2, 5, 7", outs[0].Row, outs[1].Row, outs[2].Row)
	}
	// A job whose axes another job has, a job of two axis values, and a
	// row with no job say which row.
	head := "job,axis_rps,design,goal,feasible,cost_usd_per_h\n"
	for body, want := range map[string]string{
		"a,1,X,cost,true,1\nb,1,X,cost,true,2\n": "row 3: jobs a and b have the same axis values (rps=1): a study runs one job for each",
		"a,1,X,cost,true,1\na,2,Y,cost,true,2\n": "row 3: job a has other axis values (rps=2) than on row 2",
		"a,1,X,cost,true,1\n,2,Y,cost,true,2\n":  "row 3: no job key",
	} {
		tb, err := ReadTable("t.csv", strings.NewReader(head+body))
		if err == nil {
			_, err = tb.Outcomes()
		}
		if err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
	for _, bad := range []string{
		"job,design\na,X\n",
		"job,axis_rps,design,goal,feasible\n",
		"job,axis_rps,design,goal,feasible,cost_usd_per_h\na,1,X,fast,true,1\n",
		"job,axis_rps,design,goal,feasible,cost_usd_per_h\na,1,X,cost,true,\n",
		"job,axis_rps,design,goal,feasible,cost_usd_per_h\na,1,X,cost,true,1\na,1,Y,power,true,1\n",
	} {
		tb, err := ReadTable("t.csv", strings.NewReader(bad))
		if err == nil {
			_, err = tb.Outcomes()
		}
		if err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
}
