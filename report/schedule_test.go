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
	t.Parallel()
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

// TestScheduleJSONRoundTrip: the schedule JSON reads back into the same
// document, and rewriting it gives the same bytes; a plan of no known kind
// and an unknown field are errors naming the file.
func TestScheduleJSONRoundTrip(t *testing.T) {
	t.Parallel()
	ds := testSchedules()
	p := &search.Problem{Goal: search.GoalCost, RateRPS: 65, Workload: &search.Workload{}}
	spec := search.ScheduleSpec{IntervalS: 900, DelayS: 300}
	var buf bytes.Buffer
	if err := WriteScheduleJSON(&buf, p, spec, ds); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"plans"`, `"machine_hours"`, `"intervals"`, `"prompt_machines"`, `"slos_met"`} {
		if !strings.Contains(buf.String(), key) {
			t.Errorf("the JSON lacks the key %s:\n%s", key, buf.String())
		}
	}
	doc, err := ReadScheduleJSON("s.json", bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(doc.Designs, ds) || doc.Goal != "cost" || doc.MeanRPS != 65 || doc.IntervalS != 900 || doc.DelayS != 300 {
		t.Fatalf("read back\n%+v\nwrote\n%+v", doc, ds)
	}
	var again bytes.Buffer
	if err := writeJSON(&again, doc); err != nil || again.String() != buf.String() {
		t.Errorf("rewriting changed the document (%v)", err)
	}
	for bad, want := range map[string]string{
		strings.Replace(buf.String(), `"plan": "static"`, `"plan": "weekly"`, 1): `s.json: Splitwise-HH: unknown plan "weekly"`,
		strings.Replace(buf.String(), `"requests"`, `"requests_x"`, 1):           `s.json: json: unknown field "requests_x"`,
		buf.String() + "{}": "s.json: more than one JSON document",
	} {
		if _, err := ReadScheduleJSON("s.json", strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
}
