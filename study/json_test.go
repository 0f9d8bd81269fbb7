package study

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestJSONRoundTrip: the JSON table carries the merged CSV's rows exactly
// (numbers typed, their text kept; strings that look like neither stay
// strings), and it is valid JSON with typed values.
func TestJSONRoundTrip(t *testing.T) {
	t.Parallel()
	jobs, axes := smallJobs(t)
	dir := t.TempDir()
	odd := func(ctx context.Context, j Job) ([]byte, error) {
		return []byte("design,cost,feasible,note\nA,0.1999999999999968,true,\"x, \"\"y\"\"\"\nB,1e-05,false,05\nC,,NaN,-0\n"), nil
	}
	if _, err := Run(context.Background(), dir, jobs, odd, nil); err != nil {
		t.Fatal(err)
	}
	merged, _, err := Merge(dir, jobs, axes)
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, merged); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadJSON(bytes.NewReader(js.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := csv.NewReader(bytes.NewReader(merged)).ReadAll()
	if !reflect.DeepEqual(recs, want) {
		t.Fatalf("round trip differs:\n%v\nwant\n%v", recs, want)
	}
	var back bytes.Buffer
	w := csv.NewWriter(&back)
	w.WriteAll(recs)
	if !bytes.Equal(back.Bytes(), merged) {
		t.Error("CSV written from the JSON differs from the merged CSV")
	}
	var doc struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	r := doc.Rows[0]
	if _, ok := r["cost"].(float64); !ok || r["feasible"] != true || r["note"] != `x, "y"` || r["axis_rps"] != 10.0 {
		t.Errorf("first row's types: %#v", r)
	}
	if r := doc.Rows[1]; r["note"] != "05" || r["cost"] != 1e-05 {
		t.Errorf("second row: %#v", r)
	}
	if r := doc.Rows[2]; r["cost"] != "" || r["feasible"] != "NaN" || r["note"] != 0.0 { // "-0", a JSON number
		t.Errorf("third row: %#v", r)
	}
	for _, bad := range []string{`{"columns":["a"],"rows":[{"a":null}]}`, `{"columns":["a"],"rows":[{"b":1}]}`, `{"columns":["a"],"rows":[],"x":1}`} {
		if _, err := ReadJSON(strings.NewReader(bad)); err == nil {
			t.Errorf("ReadJSON(%s): no error", bad)
		}
	}
}
