package search

import (
	"context"
	"reflect"
	"testing"
)

// TestStopFailingChangesNothing: a search that stops its simulations once
// their failure is certain (Problem.StopFailing) finds what the search
// that runs every one to its end finds: the same designs' results (optima,
// capacities, closest points and their verdicts, simulations counted) and
// the same points, each as feasible, with the same verdict where it was
// not stopped; under every goal (those that measure energy too), with
// several seeds, and when nothing is found (the closest point completed,
// its energy too).
func TestStopFailingChangesNothing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		p    func() *Problem
	}{
		{"cost coding 12 req/s", func() *Problem { return problem(t, GoalCost, "coding", 12, 10, 30, allDesigns...) }},
		{"power conversation 8 req/s, two seeds", func() *Problem {
			p := problem(t, GoalPower, "conversation", 8, 10, 30, "Baseline-H100", "Splitwise-HA", "Splitwise-HHcap")
			p.Seeds = 2
			return p
		}},
		{"iso-power coding", func() *Problem {
			p := problem(t, GoalThroughput, "coding", 0, 10, 30, "Baseline-H100", "Splitwise-HH", "Splitwise-HA")
			p.PowerBudgetKW = 8 * 11.375
			return p
		}},
		{"iso-cost conversation", func() *Problem {
			p := problem(t, GoalThroughput, "conversation", 0, 8, 30, "Baseline-A100", "Splitwise-AA")
			p.CostBudgetUSDPerH = 8 * 38
			return p
		}},
		{"energy coding 12 req/s", func() *Problem {
			return problem(t, GoalEnergy, "coding", 12, 8, 30, "Baseline-H100", "Splitwise-HH", "Splitwise-HHcap")
		}},
		{"throughput within a drawn power budget, conversation", func() *Problem {
			p := problem(t, GoalThroughput, "conversation", 0, 8, 30, "Baseline-H100", "Splitwise-HA")
			p.PowerBudgetKW, p.PowerBudgetDrawn = 60, true
			return p
		}},
		{"energy coding 60 req/s on 4 machines: nothing found", func() *Problem {
			return problem(t, GoalEnergy, "coding", 60, 2, 30, "Baseline-H100", "Splitwise-HH")
		}},
		{"cost coding 60 req/s on 4 machines: nothing found", func() *Problem {
			return problem(t, GoalCost, "coding", 60, 2, 30, "Baseline-H100", "Splitwise-HH")
		}},
	}
	stoppedAll := 0
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			full, err := Run(context.Background(), tc.p())
			if err != nil {
				t.Fatal(err)
			}
			p := tc.p()
			p.StopFailing = true
			cut, err := Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			// The same results but for the count of stopped simulations.
			designs := append([]DesignResult(nil), cut.Designs...)
			counted := 0
			for i := range designs {
				if full.Designs[i].Stopped != 0 {
					t.Errorf("%s: %d simulations stopped without StopFailing", full.Designs[i].Design, full.Designs[i].Stopped)
				}
				counted += designs[i].Stopped
				designs[i].Stopped = 0
			}
			if !reflect.DeepEqual(full.Designs, designs) || full.Winner != cut.Winner {
				t.Errorf("the designs' results differ:\n%s\n%s", summary(full), summary(cut))
			}
			if len(full.Points) != len(cut.Points) {
				t.Fatalf("%d points, %d when stopping", len(full.Points), len(cut.Points))
			}
			stopped := 0
			for i, a := range full.Points {
				b := cut.Points[i]
				if b.Stopped {
					stopped++
					if b.Feasible || b.Verdict != nil || a.Feasible || b.Note == "" || b.EnergyKnown {
						t.Errorf("%s: stopped, feasible %v (full run %v), verdict %v, note %q, energy known %v", b.Label(), b.Feasible, a.Feasible, b.Verdict, b.Note, b.EnergyKnown)
					}
					b.Stopped, b.Verdict, b.Note, b.StopLimit, b.StopS = false, a.Verdict, a.Note, "", 0
					b.EnergyKnown, b.AverageKW, b.JPerOutputToken, b.OwnershipUSDPerH = a.EnergyKnown, a.AverageKW, a.JPerOutputToken, a.OwnershipUSDPerH
				}
				if !reflect.DeepEqual(a, b) {
					t.Errorf("point %d: %+v\nwhen stopping %+v", i, a, b)
				}
			}
			t.Logf("%d of %d points left stopped, %d simulations stopped", stopped, len(cut.Points), counted)
			if counted < stopped {
				t.Errorf("%d simulations counted as stopped, %d points left stopped", counted, stopped)
			}
			stoppedAll += counted
			for _, d := range cut.Designs {
				if d.Closest != nil && d.Closest.Stopped {
					t.Errorf("%s: the closest point is left stopped", d.Design)
				}
			}
		})
	}
	if stoppedAll < 10 {
		t.Errorf("%d simulations stopped in all: the test exercises too little", stoppedAll)
	}
}
