package search

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestGoalText(t *testing.T) {
	t.Parallel()
	names := GoalNames()
	if strings.Join(names, ",") != "cost,power,throughput,batch,energy,tco" {
		t.Errorf("goal names %v", names)
	}
	for i, g := range Goals() {
		if g.String() != names[i] {
			t.Errorf("%d: %v, name %q", i, g, names[i])
		}
		b, err := g.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Goal
		if err := back.UnmarshalText(b); err != nil || back != g {
			t.Errorf("%v: round trip gives %v, %v", g, back, err)
		}
		if g.NeedsRate() == g.NeedsBudget() {
			t.Errorf("%v needs a rate: %v, a budget: %v; want exactly one", g, g.NeedsRate(), g.NeedsBudget())
		}
	}
	if g, err := ParseGoal("Throughput"); err != nil || g != GoalThroughput {
		t.Errorf("ParseGoal(Throughput) = %v, %v", g, err)
	}
	_, err := ParseGoal("speed")
	if err == nil || !strings.Contains(err.Error(), `"speed"`) || !strings.Contains(err.Error(), "cost, power, throughput, batch, energy, tco") {
		t.Errorf("bad goal: %v, want the input and the goals listed", err)
	}
	if _, err := Goal(0).MarshalText(); err == nil {
		t.Error("the zero goal marshals")
	}
	var v struct{ Goal Goal }
	if err := json.Unmarshal([]byte(`{"Goal":"batch"}`), &v); err != nil || v.Goal != GoalBatch {
		t.Errorf("json: %v, %v", v.Goal, err)
	}
	if js, _ := json.Marshal(v); string(js) != `{"Goal":"batch"}` {
		t.Errorf("json: %s", js)
	}
}

func TestGoalMerit(t *testing.T) {
	t.Parallel()
	d := DesignResult{Best: Point{CostUSDPerH: 200, PowerKW: 50, AverageKW: 10, OwnershipUSDPerH: 70, EnergyKnown: true}, CapacityRPS: 40}
	for _, c := range []struct {
		g      Goal
		want   float64
		higher bool
	}{{GoalCost, 200, false}, {GoalPower, 50, false}, {GoalThroughput, 40, true}, {GoalBatch, 0.2, true},
		{GoalEnergy, 240, false}, {GoalTCO, 70, false}} {
		if v, h := c.g.Merit(d); v != c.want || h != c.higher {
			t.Errorf("%v: merit %v (higher better %v), want %v (%v)", c.g, v, h, c.want, c.higher)
		}
	}
}
