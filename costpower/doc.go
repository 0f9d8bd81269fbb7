// Package costpower is splitplan's machine catalog: the machine types (GPUs,
// memory, links, cost per hour, provisioned power), the LLM architectures
// served on them, and the cluster designs that pair a prompt machine type
// with a token machine type. Everything here is data with TOML tags, so a
// plan file can override or extend it; a Cluster's cost and power follow
// from its machine counts.
package costpower
