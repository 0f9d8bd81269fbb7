package measured

import (
	"strings"
	"testing"
)

// TestSpeculativeRunsTable: the embedded table parses, names only
// aggregated InferenceX rows of the shipped data that record an image,
// and its image is theirs.
func TestSpeculativeRunsTable(t *testing.T) {
	t.Parallel()
	runs, err := speculativeRuns()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) < 100 {
		t.Fatalf("%d runs listed", len(runs))
	}
	byID := sharedRowsByID(t)
	for id, s := range runs {
		r, ok := byID[id]
		if !ok {
			t.Errorf("%s: not a row of the shipped data", id)
			continue
		}
		if s.Method != "mtp" || r.Mode != Agg || s.Entries == "" {
			t.Errorf("%s: %+v, mode %s", id, s, r.Mode)
		}
		if !strings.Contains(strings.ReplaceAll(r.Source, "nvcr.io#", "nvcr.io/"), "image="+s.Image) {
			t.Errorf("%s: image %s is not the row's (%s)", id, s.Image, r.Source)
		}
	}
}

// TestParseSpeculativeRuns: a table with another header, an empty id or
// an id twice is refused, naming the line.
func TestParseSpeculativeRuns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"id,method\n", "expected the header"},
		{"id,spec_decoding,config_entries,image\n,mtp,e,i\n", "line 2: empty id"},
		{"id,spec_decoding,config_entries,image\na,mtp,e,i\na,mtp,e,i\n", "line 3: id a listed twice"},
		{"id,spec_decoding,config_entries,image\na,mtp\n", "wrong number of fields"},
	} {
		if _, err := parseSpeculativeRuns([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
	m, err := parseSpeculativeRuns([]byte("id,spec_decoding,config_entries,image\na,mtp,e1 e2,img\n"))
	if err != nil || m["a"] != (speculativeRun{Method: "mtp", Entries: "e1 e2", Image: "img"}) {
		t.Errorf("got %v, %v", m, err)
	}
}

// TestValidateLeavesOutSpeculativeRuns: a listed run is not predicted,
// with its reason; a copy of its measurement under another id is left out
// with it, as a run with speculative decoding when it comes first and as
// a repeat after (one run, counted once); the same row under an unlisted
// id with another measurement is predicted.
func TestValidateLeavesOutSpeculativeRuns(t *testing.T) {
	t.Parallel()
	runs, err := speculativeRuns()
	if err != nil {
		t.Fatal(err)
	}
	var listed Row
	found := false
	for _, r := range sharedRows(t) {
		if _, ok := runs[r.ID]; ok && r.TTFTms > 0 && r.TPOTms > 0 {
			if _, err := newRowPredictor(t.Context(), r); err == nil {
				listed, found = r, true
				break
			}
		}
	}
	if !found {
		t.Fatal("no predictable listed run")
	}
	_, alone := Validate([]Row{listed}, Default())
	if p := alone[0]; !p.Speculative || !strings.Contains(p.Reason, "mtp") || !strings.Contains(p.Reason, runs[listed.ID].Entries) {
		t.Errorf("listed run alone: %+v", p)
	}
	copyBefore, copyAfter, other := listed, listed, listed
	copyBefore.ID, copyAfter.ID, other.ID = "copy-before", "copy-after", "other"
	other.TPOTms *= 1.5
	_, preds := Validate([]Row{copyBefore, listed, copyAfter, other}, Default())
	for i, want := range []struct{ spec, dup bool }{{true, false}, {false, true}, {false, true}, {false, false}} {
		p := preds[i]
		if p.Speculative != want.spec || p.Duplicate != want.dup || (p.Reason == "") != !(want.spec || want.dup) {
			t.Errorf("%s: speculative %v, duplicate %v, reason %q", p.Row.ID, p.Speculative, p.Duplicate, p.Reason)
		}
	}
	if !strings.Contains(preds[0].Reason, listed.ID) {
		t.Errorf("the copy before it: %q does not name %s", preds[0].Reason, listed.ID)
	}
}
