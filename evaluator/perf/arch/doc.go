// Package arch describes LLM architectures as data: layer counts, widths,
// attention layout (multi-head, grouped-query, multi-head latent), dense and
// mixture-of-experts feed-forward sizes, read from Hugging Face config.json
// files or taken from the built-in table.
//
// From an Arch it derives, by documented closed-form formulas, the parameter
// counts, weight bytes, KV-cache bytes and FLOPs that the analytic
// performance model (package analytic) turns into iteration times.
package arch

//go:generate go run ./internal/genarch
