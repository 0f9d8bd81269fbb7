package hw

import "strings"

// Generation returns the generation of a GPU by its name (h100_sxm,
// gb200, ...): ampere, ada, hopper, blackwell or cdna3; "" for a GPU it
// does not know. GPUs of a generation share their engines' kernels and a
// CPU and software era.
func Generation(gpu string) string {
	g := strings.ToLower(gpu)
	for _, p := range []struct{ prefix, gen string }{
		{"a100", "ampere"}, {"a10", "ampere"}, {"a30", "ampere"}, {"a40", "ampere"},
		{"l40", "ada"}, {"l4", "ada"},
		{"h100", "hopper"}, {"h200", "hopper"}, {"h20", "hopper"}, {"gh200", "hopper"},
		{"b200", "blackwell"}, {"b300", "blackwell"}, {"gb200", "blackwell"}, {"gb300", "blackwell"},
		{"mi300", "cdna3"}, {"mi325", "cdna3"},
	} {
		if strings.HasPrefix(g, p.prefix) {
			return p.gen
		}
	}
	return ""
}
