package perf

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"splitplan/internal/quantile"
)

// DefaultMixedPenalty is the factor by which a mixed iteration (prompts and
// decodes together) is slower than a prompt-only iteration of as many
// tokens.
const DefaultMixedPenalty = 1.1

// pairKey identifies a (model, hardware, tensor parallelism) pair.
type pairKey struct {
	model, hardware string
	tp              int
}

// groupRows splits rows by pair, in the order (model, hardware, tp). Names
// are compared case-insensitively (as Table.Lookup does) and the keys are
// lower case.
func groupRows(rows []ProfileRow) ([]pairKey, map[pairKey][]ProfileRow) {
	groups := map[pairKey][]ProfileRow{}
	var keys []pairKey
	for _, r := range rows {
		k := pairKey{}
		k.model, k.hardware, k.tp = lowerPair(r)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	sort.Slice(keys, func(i, j int) bool { return keyLess(keys[i], keys[j]) })
	return keys, groups
}

// lowerPair is a row's profiled pair as Fit keys it: names in lower case.
func lowerPair(r ProfileRow) (model, hardware string, tp int) {
	return strings.ToLower(r.Model), strings.ToLower(r.Hardware), r.TP
}

func keyLess(a, b pairKey) bool {
	if a.model != b.model {
		return a.model < b.model
	}
	if a.hardware != b.hardware {
		return a.hardware < b.hardware
	}
	return a.tp < b.tp
}

// Fit fits one Pair per (model, hardware, tensor parallelism) found in
// rows (names compared case-insensitively and stored in lower case),
// sorted by model, hardware and tp. penalty is the mixed-iteration
// factor stored in every pair (DefaultMixedPenalty is the usual choice).
//
// The default fit drops the runs that are not Consistent (whose
// end-to-end time shows they did not run as one batch), takes, for each
// profiled point (prompt_size, batch_size, token_size), the median over
// its repeats, then:
//   - prompt curve: x = prompt_size × batch_size, y = prompt_time (the
//     median of the point medians sharing an x);
//   - decode curve: x = batch_size, y = token_time, over the points at the
//     base context: the most common prompt_size (by rows; ties to the
//     smaller) with the smallest token_size profiled at it;
//   - context curve: x = prompt_size + token_size/2 (the mean context
//     during the decode), y = token_time, over the points at batch size 1
//     (at the smallest batch size if none was profiled at 1).
//
// The knots are the medians as measured; Pair.Model turns them into a
// physical model (isotonic curves and a least-squares context slope, see
// Pair.ContextSlope).
//
// The compat fit keys both curves on batch_tokens = prompt_size ×
// batch_size with medians pooled over every row of that product (all
// repeats and token sizes), as SplitwiseSim does.
func Fit(rows []ProfileRow, penalty float64) ([]Pair, error) {
	if !(penalty > 0) || math.IsInf(penalty, 0) {
		return nil, fmt.Errorf("perf: mixed penalty %v: expected a positive finite factor", penalty)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("perf: no profile rows to fit")
	}
	keys, groups := groupRows(rows)
	pairs := make([]Pair, 0, len(keys))
	for _, k := range keys {
		p := fitPair(groups[k], penalty)
		p.ModelName, p.Hardware, p.TP = k.model, k.hardware, k.tp
		if err := p.Validate(); err != nil {
			return nil, err
		}
		pairs = append(pairs, p)
	}
	return pairs, nil
}

// point is one profiled point with the medians of its repeats.
type point struct {
	prompt, batch, token  int
	promptTime, tokenTime float64
}

// maxE2ERatio bounds a consistent run's end-to-end time: at most this
// many times its prompt time plus token_size decode iterations (see
// Consistent).
const maxE2ERatio = 2

// Consistent reports whether r measured what its columns say: a run of one
// prompt iteration and token_size decode iterations cannot take more than
// twice as long end to end (maxE2ERatio) as those iterations add up to. A
// run past that did not execute as one batch (in the shipped profile,
// Llama2-70B at tp 2 with 64 requests: e2e 14–17× the sum, its prompt
// time a seventh of the batch of 32's, the engine out of memory and
// queueing), so its iteration times are not those of its batch. Rows
// without an end-to-end time are consistent. (Runs often end early, so a
// shorter e2e is no sign of trouble.)
func Consistent(r ProfileRow) bool {
	return !(r.E2ETime > 0) || r.E2ETime <= maxE2ERatio*(r.PromptTime+float64(r.TokenSize)*r.TokenTime)
}

// fitPair fits the rows of one pair (names left empty).
func fitPair(rows []ProfileRow, penalty float64) Pair {
	type pk struct{ prompt, batch, token int }
	byPoint := map[pk][]ProfileRow{}
	promptCount := map[int]int{}
	// The default curves use the consistent rows only (all rows if none
	// is); the compat curves use every row, as SplitwiseSim does.
	var good []ProfileRow
	for _, r := range rows {
		if Consistent(r) {
			good = append(good, r)
		}
	}
	if len(good) == 0 {
		good = rows
	}
	for _, r := range good {
		k := pk{r.PromptSize, r.BatchSize, r.TokenSize}
		byPoint[k] = append(byPoint[k], r)
		promptCount[r.PromptSize]++
	}
	points := make([]point, 0, len(byPoint))
	for k, rs := range byPoint {
		pt, tt := make([]float64, len(rs)), make([]float64, len(rs))
		for i, r := range rs {
			pt[i], tt[i] = r.PromptTime, r.TokenTime
		}
		points = append(points, point{k.prompt, k.batch, k.token, quantile.Median(pt), quantile.Median(tt)})
	}
	// Deterministic order, so the medians below see their inputs in the
	// same order every time (the median does not depend on it, but the
	// slices are sorted anyway).
	sort.Slice(points, func(i, j int) bool {
		a, b := points[i], points[j]
		if a.prompt != b.prompt {
			return a.prompt < b.prompt
		}
		if a.batch != b.batch {
			return a.batch < b.batch
		}
		return a.token < b.token
	})

	// Base context: the most common prompt size, smallest token size at it.
	baseP, bestN := 0, -1
	for p, n := range promptCount {
		if n > bestN || (n == bestN && p < baseP) {
			baseP, bestN = p, n
		}
	}
	baseT := math.MaxInt
	minBatch := math.MaxInt
	for _, pt := range points {
		if pt.prompt == baseP && pt.token < baseT {
			baseT = pt.token
		}
		minBatch = min(minBatch, pt.batch)
	}

	prompt := curveOf(len(points), func(add func(x, y float64)) {
		for _, pt := range points {
			add(float64(pt.prompt)*float64(pt.batch), pt.promptTime)
		}
	})
	decode := curveOf(len(points), func(add func(x, y float64)) {
		for _, pt := range points {
			if pt.prompt == baseP && pt.token == baseT {
				add(float64(pt.batch), pt.tokenTime)
			}
		}
	})
	context := curveOf(len(points), func(add func(x, y float64)) {
		for _, pt := range points {
			if pt.batch == minBatch {
				add(float64(pt.prompt)+float64(pt.token)/2, pt.tokenTime)
			}
		}
	})
	compatPrompt := curveOf(len(rows), func(add func(x, y float64)) {
		for _, r := range rows {
			add(float64(r.PromptSize)*float64(r.BatchSize), r.PromptTime)
		}
	})
	compatToken := curveOf(len(rows), func(add func(x, y float64)) {
		for _, r := range rows {
			add(float64(r.PromptSize)*float64(r.BatchSize), r.TokenTime)
		}
	})
	return Pair{
		MixedPenalty:      penalty,
		PromptTokens:      prompt.X,
		PromptTimeS:       prompt.Y,
		DecodeBatch:       decode.X,
		DecodeTimeS:       decode.Y,
		BaseContextTokens: float64(baseP) + float64(baseT)/2,
		ContextTokens:     context.X,
		ContextTimeS:      context.Y,
		CompatBatchTokens: compatPrompt.X,
		CompatPromptTimeS: compatPrompt.Y,
		CompatTokenTimeS:  compatToken.Y,
	}
}

// curveOf builds a curve from (x, y) samples: one knot per distinct x, at
// the median of the y sampled there.
func curveOf(hint int, samples func(add func(x, y float64))) Curve {
	byX := make(map[float64][]float64, hint)
	samples(func(x, y float64) { byX[x] = append(byX[x], y) })
	xs := make([]float64, 0, len(byX))
	for x := range byX {
		xs = append(xs, x)
	}
	slices.Sort(xs)
	ys := make([]float64, len(xs))
	for i, x := range xs {
		ys[i] = quantile.Median(byX[x])
	}
	return Curve{X: xs, Y: ys}
}
