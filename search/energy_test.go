package search

import (
	"context"
	"testing"
)

// TestReportedEnergyAsMeasured: a search that measures the energy of the
// points it reports only (the default) reports, for each design's optimum
// or closest point, exactly the energy figures a search measuring every
// simulation's energy (Options.Energy, as for the points CSV) reports,
// runs the same number of simulations and finds the same points.
func TestReportedEnergyAsMeasured(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		p    func() *Problem
	}{
		{"cost coding 12 req/s, 2 seeds", func() *Problem {
			p := problem(t, GoalCost, "coding", 12, 10, 30, "Splitwise-HH", "Baseline-H100", "Splitwise-HA")
			p.Seeds = 2
			return p
		}},
		{"iso-power conversation", func() *Problem {
			p := problem(t, GoalThroughput, "conversation", 0, 8, 20, "Baseline-A100", "Splitwise-HHcap")
			p.PowerBudgetKW = 60
			return p
		}},
		{"nothing found: closest points", func() *Problem {
			return problem(t, GoalPower, "coding", 60, 3, 20, "Splitwise-AA", "Baseline-H100")
		}},
	}
	for _, tc := range cases {
		lean, err := Run(context.Background(), tc.p())
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		all := tc.p()
		all.Options.Energy = true
		full, err := Run(context.Background(), all)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(lean.Designs) != len(full.Designs) || len(lean.Points) != len(full.Points) {
			t.Fatalf("%s: %d designs and %d points without every energy, %d and %d with", tc.name,
				len(lean.Designs), len(lean.Points), len(full.Designs), len(full.Points))
		}
		t.Logf("%s: %s", tc.name, summary(lean))
		reported := 0
		for i, d := range lean.Designs {
			f := full.Designs[i]
			if d.Simulations != f.Simulations || d.Found != f.Found || (d.Closest == nil) != (f.Closest == nil) {
				t.Fatalf("%s %s: %d simulations, found %v, without every energy; %d, %v with", tc.name, d.Design,
					d.Simulations, d.Found, f.Simulations, f.Found)
			}
			a, b := &d.Best, &f.Best
			if !d.Found {
				if d.Closest == nil {
					continue
				}
				a, b = d.Closest, f.Closest
			}
			reported++
			if !b.EnergyKnown {
				t.Errorf("%s %s: energy unknown with Options.Energy", tc.name, d.Design)
			}
			if a.Prompt != b.Prompt || a.Token != b.Token || a.RateRPS != b.RateRPS || a.EnergyKnown != b.EnergyKnown ||
				a.AverageKW != b.AverageKW || a.JPerOutputToken != b.JPerOutputToken || a.OwnershipUSDPerH != b.OwnershipUSDPerH {
				t.Errorf("%s %s: reported %d/%d at %v: %v kW, %v J/token, $%v/h owned; measured in the search: %d/%d at %v: %v kW, %v J/token, $%v/h",
					tc.name, d.Design, a.Prompt, a.Token, a.RateRPS, a.AverageKW, a.JPerOutputToken, a.OwnershipUSDPerH,
					b.Prompt, b.Token, b.RateRPS, b.AverageKW, b.JPerOutputToken, b.OwnershipUSDPerH)
			}
		}
		if reported == 0 {
			t.Errorf("%s: no design reported a point: the case checks nothing", tc.name)
		}
		if tc.name == "nothing found: closest points" {
			for _, d := range lean.Designs {
				if d.Found {
					t.Errorf("%s: %s found a cluster; the case is meant to find none", tc.name, d.Design)
				}
			}
		}
	}
}
