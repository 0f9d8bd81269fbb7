package measured

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// speculativeRunsCSV lists the shipped benchmark runs that drafted tokens
// with a multi-token-prediction (MTP) head: id, spec_decoding, the
// InferenceX launch-matrix entries that ran them and their image. The
// rows do not record it; scripts/inferencex_mtp.py derives it from every
// version of InferenceX's .github/configs/nvidia-master.yaml (a row whose
// GPU, engine, precision, image, lengths, layout and concurrency only MTP
// points of the matrix match). Where one configuration was also run
// without MTP under another image, the MTP run decodes 1.05–2.5× faster
// (median 1.61×, 27 configurations), which the model, drafting no tokens,
// cannot predict.
//
//go:embed speculative_runs.csv
var speculativeRunsCSV []byte

// speculativeRun is one run of speculativeRunsCSV.
type speculativeRun struct {
	Method, Entries, Image string
}

// speculativeRuns is speculativeRunsCSV by row id.
var speculativeRuns = sync.OnceValues(func() (map[string]speculativeRun, error) {
	return parseSpeculativeRuns(speculativeRunsCSV)
})

// parseSpeculativeRuns reads a speculative-runs table (header id,
// spec_decoding, config_entries, image).
func parseSpeculativeRuns(b []byte) (map[string]speculativeRun, error) {
	recs, err := idTable("speculative_runs.csv", b, []string{"id", "spec_decoding", "config_entries", "image"})
	if err != nil {
		return nil, err
	}
	m := make(map[string]speculativeRun, len(recs))
	for i, r := range recs {
		if r[1] == "" {
			return nil, fmt.Errorf("speculative_runs.csv line %d: empty spec_decoding", i+2)
		}
		m[r[0]] = speculativeRun{Method: r[1], Entries: r[2], Image: r[3]}
	}
	return m, nil
}

// idTable reads name, an embedded table keyed by its first column, id: its
// header must be header and each id given once. It returns the rows after
// the header (row i on line i+2).
func idTable(name string, b []byte, header []string) ([][]string, error) {
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(recs) == 0 || !slices.Equal(recs[0], header) {
		return nil, fmt.Errorf("%s: expected the header %s", name, strings.Join(header, ","))
	}
	seen := make(map[string]bool, len(recs)-1)
	for i, r := range recs[1:] {
		switch {
		case r[0] == "":
			return nil, fmt.Errorf("%s line %d: empty id", name, i+2)
		case seen[r[0]]:
			return nil, fmt.Errorf("%s line %d: id %s listed twice", name, i+2, r[0])
		}
		seen[r[0]] = true
	}
	return recs[1:], nil
}

// errSpeculative marks a row that ran with speculative decoding
// (speculativeRuns); RowPrediction.Speculative reports it.
var errSpeculative = errors.New("ran with speculative decoding")

// speculativeKeys are the measurements of the listed runs, so that a copy
// of one recorded under another id (another snapshot of the data, one
// without the image) is left out with it: a sameRun of them.
type speculativeKeys struct{ runs sameRun }

// newSpeculativeKeys collects the measurements of rows' listed runs.
func newSpeculativeKeys(rows []Row) speculativeKeys {
	var k speculativeKeys
	for _, r := range rows {
		if _, ok := listedSpeculative(r); ok {
			k.runs.add(r)
		}
	}
	return k
}

// listedSpeculative reports whether r is a run a table lists as drafting
// tokens, and what names it (with its separator from the message before
// it): speculativeRuns for the aggregated runs, disaggRecipes for the
// disaggregated ones only MTP points of the launch matrix match.
func listedSpeculative(r Row) (named string, ok bool) {
	runs, err := speculativeRuns()
	if err != nil {
		panic(err) // the embedded table; TestSpeculativeRunsTable reads it
	}
	if s, ok := runs[r.ID]; ok {
		return fmt.Sprintf(" (%s; InferenceX's launch matrix runs it as %s with %s)", s.Method, s.Entries, s.Image), true
	}
	if d, ok := disaggRecipeOf(r); ok && d.Spec == "mtp" {
		return fmt.Sprintf(": InferenceX's launch matrix runs it with MTP only (%s)", d.Recipe), true
	}
	return "", false
}

// check returns an errSpeculative error when r is a listed run or a copy
// of one's measurement (by sameRun's rules: to 12 digits, or to 0.01 ms
// where one of the two is written rounded).
func (k speculativeKeys) check(r Row) error {
	if named, ok := listedSpeculative(r); ok {
		return fmt.Errorf("%w: %w%s: the model drafts no tokens, so its TPOT and TTFT are not what it predicts",
			ErrUnpredictable, errSpeculative, named)
	}
	if first, _, ok := k.runs.find(r); ok {
		return fmt.Errorf("%w: %w: the same measurement as %s, a run with speculative decoding (MTP): the model drafts no tokens",
			ErrUnpredictable, errSpeculative, first.ID)
	}
	return nil
}
