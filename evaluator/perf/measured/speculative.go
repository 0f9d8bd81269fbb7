package measured

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
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
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("speculative_runs.csv: %w", err)
	}
	if len(recs) == 0 || len(recs[0]) != 4 || recs[0][0] != "id" || recs[0][1] != "spec_decoding" || recs[0][2] != "config_entries" || recs[0][3] != "image" {
		return nil, errors.New("speculative_runs.csv: expected the header id,spec_decoding,config_entries,image")
	}
	m := make(map[string]speculativeRun, len(recs)-1)
	for i, r := range recs[1:] {
		if r[0] == "" || r[1] == "" {
			return nil, fmt.Errorf("speculative_runs.csv line %d: empty id or spec_decoding", i+2)
		}
		if _, dup := m[r[0]]; dup {
			return nil, fmt.Errorf("speculative_runs.csv line %d: id %s listed twice", i+2, r[0])
		}
		m[r[0]] = speculativeRun{Method: r[1], Entries: r[2], Image: r[3]}
	}
	return m, nil
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
	runs, err := speculativeRuns()
	if err != nil {
		panic(err) // the embedded table; TestSpeculativeRunsTable reads it
	}
	var k speculativeKeys
	for _, r := range rows {
		if _, ok := runs[r.ID]; ok {
			k.runs.add(r)
		} else if d, ok := disaggRecipeOf(r); ok && d.Spec == "mtp" {
			k.runs.add(r)
		}
	}
	return k
}

// check returns an errSpeculative error when r is a listed run or a copy
// of one's measurement (by sameRun's rules: to 12 digits, or to 0.01 ms
// where one of the two is written rounded).
func (k speculativeKeys) check(r Row) error {
	runs, _ := speculativeRuns()
	if s, ok := runs[r.ID]; ok {
		return fmt.Errorf("%w: %w (%s; InferenceX's launch matrix runs it as %s with %s): the model drafts no tokens, so its TPOT and TTFT are not what it predicts",
			ErrUnpredictable, errSpeculative, s.Method, s.Entries, s.Image)
	}
	if d, ok := disaggRecipeOf(r); ok && d.Spec == "mtp" {
		return fmt.Errorf("%w: %w: %w (%s): the model drafts no tokens, so its TPOT and TTFT are not what it predicts",
			ErrUnpredictable, errSpeculative, errDisaggSpeculative, d.Recipe)
	}
	if first, _, ok := k.runs.find(r); ok {
		return fmt.Errorf("%w: %w: the same measurement as %s, a run with speculative decoding (MTP): the model drafts no tokens",
			ErrUnpredictable, errSpeculative, first.ID)
	}
	return nil
}
