package perf

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
)

// ValidationRow is the error of the default fit on the held-out rows of one
// pair, or of all pairs pooled (Model "all").
type ValidationRow struct {
	// Model, Hardware and TP name the pair; the pooled row has Model and
	// Hardware "all" and TP 0.
	Model, Hardware string
	TP              int
	// PromptMAPEPct and TokenMAPEPct are the mean absolute percentage
	// errors of the default model's prompt and decode times.
	// NaN when no row was held out (TestRows 0): nothing was measured.
	PromptMAPEPct, TokenMAPEPct float64
	// CompatPromptMAPEPct and CompatTokenMAPEPct are the same for the
	// compat (SplitwiseSim) model fitted on the same training rows and
	// used as the simulator uses it (decode time at x = batch size).
	CompatPromptMAPEPct, CompatTokenMAPEPct float64
	// TrainRows and TestRows are the rows fitted and predicted.
	TrainRows, TestRows int
	// ExcludedRows are the held-out rows not predicted because they are
	// not Consistent (they did not run as one batch, so no iteration model
	// should match their times).
	ExcludedRows int
}

// AllPairs is the Model and Hardware of the pooled ValidationRow.
const AllPairs = "all"

// Validate measures the fit as the Splitwise authors did: for each pair it
// shuffles the pair's rows (math/rand/v2 PCG seeded from seed and the
// pair's key, so each pair's split is deterministic and independent of the
// others), holds out 20% of them (at least one when there are two or more
// rows), fits the training rows and predicts each test row: prompt_time
// with PromptTime(prompt_size × batch_size), token_time with
// DecodeTime(batch_size, batch_size × (prompt_size + token_size/2)). Held-out
// rows that are not Consistent are excluded (counted in ExcludedRows) from
// every column. It returns one row per pair, sorted as Fit sorts them, then
// the pooled row over every test row. A pair with a single row is fitted
// but not tested.
func Validate(rows []ProfileRow, seed uint64, penalty float64) ([]ValidationRow, error) {
	if len(rows) == 0 {
		return nil, fmt.Errorf("perf: no profile rows to validate")
	}
	var out []ValidationRow
	var all mapeSum
	for _, g := range HeldOutGroups(rows, seed, lowerPair) {
		test, train := g.Test, g.Train
		pairs, err := Fit(train, penalty)
		if err != nil {
			return nil, err
		}
		def, compat := pairs[0].Model(), pairs[0].CompatModel()
		var s mapeSum
		excluded := 0
		for _, r := range test {
			if !Consistent(r) {
				excluded++
				continue
			}
			s.add(def, compat, r)
			all.add(def, compat, r)
		}
		row := s.row(g.Model, g.Hardware, g.TP)
		row.TrainRows, row.ExcludedRows = len(train), excluded
		out = append(out, row)
	}
	total := all.row(AllPairs, AllPairs, 0)
	for _, r := range out {
		total.TrainRows += r.TrainRows
		total.ExcludedRows += r.ExcludedRows
	}
	out = append(out, total)
	return out, nil
}

// mapeSum accumulates absolute percentage errors.
type mapeSum struct {
	n                              int
	prompt, token, cPrompt, cToken float64
}

func ape(got, want float64) float64 { return math.Abs(got-want) / want * 100 }

func (s *mapeSum) add(def, compat IterationModel, r ProfileRow) {
	tokens := r.PromptSize * r.BatchSize
	ctx := int64(r.BatchSize) * (int64(r.PromptSize) + int64(r.TokenSize)/2)
	p, _ := def.PromptTime(tokens)
	d, _ := def.DecodeTime(r.BatchSize, ctx)
	cp, _ := compat.PromptTime(tokens)
	cd, _ := compat.DecodeTime(r.BatchSize, ctx)
	s.n++
	s.prompt += ape(p, r.PromptTime)
	s.token += ape(d, r.TokenTime)
	s.cPrompt += ape(cp, r.PromptTime)
	s.cToken += ape(cd, r.TokenTime)
}

func (s *mapeSum) row(model, hardware string, tp int) ValidationRow {
	r := ValidationRow{Model: model, Hardware: hardware, TP: tp, TestRows: s.n}
	nan := math.NaN() // no test row: no error measured
	r.PromptMAPEPct, r.TokenMAPEPct, r.CompatPromptMAPEPct, r.CompatTokenMAPEPct = nan, nan, nan, nan
	if s.n > 0 {
		n := float64(s.n)
		r.PromptMAPEPct, r.TokenMAPEPct = s.prompt/n, s.token/n
		r.CompatPromptMAPEPct, r.CompatTokenMAPEPct = s.cPrompt/n, s.cToken/n
	}
	return r
}

// HeldOut is one profiled pair's held-out and training items.
type HeldOut[T any] struct {
	Model, Hardware string
	TP              int
	Test, Train     []T
}

// HeldOutGroups groups items by profiled pair (pairOf gives an item's
// model, hardware and tensor parallelism, as the split's seed reads them),
// orders the pairs by model, hardware and TP, and splits each pair's items
// with HeldOutSplit.
func HeldOutGroups[T any](items []T, seed uint64, pairOf func(T) (model, hardware string, tp int)) []HeldOut[T] {
	groups := map[pairKey][]T{}
	var keys []pairKey
	for _, it := range items {
		m, h, tp := pairOf(it)
		k := pairKey{m, h, tp}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], it)
	}
	sort.Slice(keys, func(i, j int) bool { return keyLess(keys[i], keys[j]) })
	out := make([]HeldOut[T], len(keys))
	for i, k := range keys {
		test, train := HeldOutSplit(groups[k], seed, k.model, k.hardware, k.tp)
		out[i] = HeldOut[T]{Model: k.model, Hardware: k.hardware, TP: k.tp, Test: test, Train: train}
	}
	return out
}

// HeldOutSplit is the 80:20 split of one (model, hardware, tp) pair's rows
// that every held-out figure of the profile uses: a copy of g shuffled with
// a generator seeded by seed and the pair, the first 20% (at least one row
// of two or more) held out for testing, the rest for fitting.
func HeldOutSplit[T any](g []T, seed uint64, model, hardware string, tp int) (test, train []T) {
	g = append([]T(nil), g...)
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s\x00%d", model, hardware, tp)
	rng := rand.New(rand.NewPCG(seed, h.Sum64()))
	rng.Shuffle(len(g), func(i, j int) { g[i], g[j] = g[j], g[i] })
	nTest := int(math.Round(0.2 * float64(len(g))))
	if nTest == 0 && len(g) >= 2 {
		nTest = 1
	}
	return g[:nTest], g[nTest:]
}
