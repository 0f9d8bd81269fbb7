package report

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"splitplan/search"
)

// testSchedules are two designs' plans with every kind of field.
func testSchedules() []search.DesignSchedule {
	iv := func(start float64, p, t int, pass bool) search.IntervalFigures {
		return search.IntervalFigures{StartS: start, EndS: start + 900, MeanRPS: 40.25, PeakRPS: 51.5, Prompt: p, Token: t, Requests: 36000, Pass: pass}
	}
	return []search.DesignSchedule{
		{Design: "Splitwise-HH", Plans: []search.PlanFigures{
			{Kind: search.PlanStatic, MachineHours: 90.25, CostUSD: 3430.6, EnergyKWh: 292.4, Pass: true, Binding: "P50 TBT 0.864/1.25", IntervalsMet: 1,
				Intervals: []search.IntervalFigures{iv(0, 33, 12, true), iv(900, 33, 12, true)}},
			{Kind: search.PlanReactive, MachineHours: 75.7, CostUSD: 2875.5, EnergyKWh: 264.3, Pass: false, Binding: "unsustainable (request 9: waited)", IntervalsMet: 0.5,
				Intervals: []search.IntervalFigures{iv(0, -1, -1, true), iv(900, -1, -1, false)}},
		}},
		{Design: "Splitwise H200·tp1 / H100·tp2", Plans: []search.PlanFigures{
			{Kind: search.PlanScheduled, MachineHours: 1, CostUSD: 2, EnergyKWh: 3, Pass: true, Binding: "P99 TTFT 5.2/6", IntervalsMet: 1,
				Intervals: []search.IntervalFigures{iv(0, 4, 0, true)}},
		}},
	}
}

// TestScheduleCSVRoundTrip: the schedule CSV reads back into the same
// plans, and rewriting them gives the same bytes.
func TestScheduleCSVRoundTrip(t *testing.T) {
	ds := testSchedules()
	var buf bytes.Buffer
	if err := WriteScheduleCSV(&buf, ds); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.csv")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadScheduleCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, ds) {
		t.Fatalf("read back\n%+v\nwrote\n%+v", got, ds)
	}
	var again bytes.Buffer
	if err := WriteScheduleCSV(&again, got); err != nil || again.String() != buf.String() {
		t.Errorf("rewriting changed the file (%v)", err)
	}
	bad := strings.Replace(buf.String(), ",static,", ",weekly,", 1)
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadScheduleCSV(path); err == nil || !strings.Contains(err.Error(), "s.csv:2: column plan") {
		t.Errorf("a bad plan: %v", err)
	}
}
