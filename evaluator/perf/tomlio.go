package perf

import (
	"fmt"
	"io"
	"strings"

	"github.com/BurntSushi/toml"
)

// pairsFile is the TOML layout of a file of fitted pairs: one [[perf]]
// table per pair.
type pairsFile struct {
	Perf []Pair `toml:"perf"`
}

// DecodePairs reads a TOML document of [[perf]] tables (one Pair each)
// from r and validates every pair. name is used in error messages. Keys
// the Pair does not know, and any other top-level key, are rejected with
// an error naming them; two pairs with the same key are an error.
//
// A plan file that holds [[perf]] tables among other sections can decode
// them into a []Pair field tagged `toml:"perf"` itself and call
// Pair.Validate on each.
func DecodePairs(r io.Reader, name string) ([]Pair, error) {
	var f pairsFile
	md, err := toml.NewDecoder(r).Decode(&f)
	if err != nil {
		return nil, fmt.Errorf("perf: %s: %w", name, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return nil, fmt.Errorf("perf: %s: unknown key(s) %s (expected [[perf]] tables with the keys of a fitted pair)",
			name, strings.Join(keys, ", "))
	}
	for i := range f.Perf {
		if err := f.Perf[i].Validate(); err != nil {
			return nil, fmt.Errorf("%s: [[perf]] #%d: %w", name, i+1, err)
		}
		for j := range i {
			if sameKey(&f.Perf[j], f.Perf[i].ModelName, f.Perf[i].Hardware, f.Perf[i].TP) {
				return nil, fmt.Errorf("perf: %s: [[perf]] #%d: pair %s given twice (also #%d)",
					name, i+1, f.Perf[i].Name(), j+1)
			}
		}
	}
	return f.Perf, nil
}

// EncodePairs writes pairs to w as a TOML document of [[perf]] tables,
// which DecodePairs reads back exactly (floats are written with the
// fewest digits that round-trip).
func EncodePairs(w io.Writer, pairs []Pair) error {
	enc := toml.NewEncoder(w)
	enc.Indent = ""
	if err := enc.Encode(pairsFile{Perf: pairs}); err != nil {
		return fmt.Errorf("perf: encoding pairs: %w", err)
	}
	return nil
}
