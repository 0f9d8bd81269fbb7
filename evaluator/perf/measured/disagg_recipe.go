package measured

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// disaggRecipesCSV lists, for the shipped disaggregated runs whose recipe
// is known, the limits their workers ran under: id, decode_max_batch
// (requests a decode rank runs at once: TensorRT-LLM's max_batch_size,
// SGLang's max-running-requests), prefill_max_batch, prefill_max_tokens,
// spec_decoding (mtp where every matching point of the launch matrix
// drafts tokens) and the recipe's path. The rows do not record them; scripts/inferencex_disagg.py
// reads them from the srt-slurm recipes (NVIDIA/srt-slurm) that every
// version of InferenceX's launch matrix names for the run's GPU, engine,
// precision, image, lengths, layouts and concurrency. An empty field is
// one the recipes do not set or disagree on.
//
// The decode limit is what makes the largest disaggregated TTFTs: InferenceX
// runs several concurrencies on one recipe, and where the clients outnumber
// the decode ranks' slots the rest wait for one (the GB200's DeepSeek-R1
// fp8 runs at 27 clients on three decode workers of 8 slots wait an eighth
// of a request's decode, 1.6 s where 0.18 s was predicted).
//
//go:embed disagg_recipes.csv
var disaggRecipesCSV []byte

// disaggRecipe is one run of disaggRecipesCSV (0: not known).
type disaggRecipe struct {
	DecodeMaxBatch, PrefillMaxBatch, PrefillMaxTokens int
	Spec, Recipe                                      string
}

// disaggRecipes is disaggRecipesCSV by row id.
var disaggRecipes = sync.OnceValues(func() (map[string]disaggRecipe, error) {
	return parseDisaggRecipes(disaggRecipesCSV)
})

// disaggRecipeHeader is disaggRecipesCSV's header.
var disaggRecipeHeader = []string{"id", "decode_max_batch", "prefill_max_batch", "prefill_max_tokens", "spec_decoding", "recipe"}

// parseDisaggRecipes reads a disaggregated-recipes table.
func parseDisaggRecipes(b []byte) (map[string]disaggRecipe, error) {
	recs, err := idTable("disagg_recipes.csv", b, disaggRecipeHeader)
	if err != nil {
		return nil, err
	}
	m := make(map[string]disaggRecipe, len(recs))
	for i, r := range recs {
		var d disaggRecipe
		for j, dst := range []*int{&d.DecodeMaxBatch, &d.PrefillMaxBatch, &d.PrefillMaxTokens} {
			if r[j+1] == "" {
				continue
			}
			v, err := strconv.Atoi(r[j+1])
			if err != nil || v <= 0 {
				return nil, fmt.Errorf("disagg_recipes.csv line %d: %s %q is not a positive integer", i+2, disaggRecipeHeader[j+1], r[j+1])
			}
			*dst = v
		}
		if d.Spec, d.Recipe = r[4], r[5]; d.Spec != "" && d.Spec != "mtp" {
			return nil, fmt.Errorf("disagg_recipes.csv line %d: spec_decoding %q is neither empty nor mtp", i+2, d.Spec)
		}
		m[r[0]] = d
	}
	return m, nil
}

// disaggRecipeOf returns the recipe of r, a disaggregated row, where
// disaggRecipesCSV knows it.
func disaggRecipeOf(r Row) (disaggRecipe, bool) {
	m, err := disaggRecipes()
	if err != nil {
		panic(err) // the embedded table; TestDisaggRecipesTable reads it
	}
	d, ok := m[r.ID]
	return d, ok && r.Mode == Disagg
}

// decodeSlots returns the requests a decode rank of r runs at once, 0
// where its recipe sets no limit (decDP the decode worker's attention-DP
// ranks): TensorRT-LLM's max_batch_size is per rank, SGLang's
// max-running-requests a worker's, shared by its ranks.
func (d disaggRecipe) decodeSlots(r Row, decDP int) float64 {
	if r.Engine == SGLang {
		return float64(d.DecodeMaxBatch) / float64(max(decDP, 1))
	}
	return float64(d.DecodeMaxBatch)
}

// prefillBatch returns the most prompts of meanISL tokens a prefill rank
// of r runs at once under its recipe's TensorRT-LLM limits (max_num_tokens
// and max_batch_size), 0 where they are not known. SGLang's prefill
// limits (max-running-requests, chunked-prefill-size) are not whole-prompt
// batches of this kind and are not taken.
func (d disaggRecipe) prefillBatch(r Row, meanISL float64) int {
	if r.Engine != TRTLLM || d.PrefillMaxTokens <= 0 {
		return 0
	}
	k := max(1, int(float64(d.PrefillMaxTokens)/meanISL))
	if d.PrefillMaxBatch > 0 {
		k = min(k, d.PrefillMaxBatch)
	}
	return k
}

// flags returns the recipe's limits that the prediction of r applies, as
// the recipe writes them, or "" where it applies none.
func (d disaggRecipe) flags(r Row) string {
	var f []string
	switch {
	case d.DecodeMaxBatch > 0 && r.Engine == SGLang:
		f = append(f, fmt.Sprintf("decode max-running-requests %d", d.DecodeMaxBatch))
	case d.DecodeMaxBatch > 0:
		f = append(f, fmt.Sprintf("decode max_batch_size %d", d.DecodeMaxBatch))
	}
	if r.Engine == TRTLLM && d.PrefillMaxTokens > 0 {
		p := fmt.Sprintf("prefill max_num_tokens %d", d.PrefillMaxTokens)
		if d.PrefillMaxBatch > 0 {
			p += fmt.Sprintf(", max_batch_size %d", d.PrefillMaxBatch)
		}
		f = append(f, p)
	}
	if len(f) == 0 {
		return ""
	}
	return strings.Join(f, "; ") + " (srt-slurm " + d.Recipe + ")"
}
