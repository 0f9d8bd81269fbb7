package resolve

import (
	"splitplan/costpower"
	"splitplan/evaluator"
)

// NewCluster resolves a design with machine counts from the catalog, the
// model by name, and the machine types' performance models from src (the
// reference simulator's fit when src.Compat is set), both pools from one
// provenance (Source.ForSpace).
func NewCluster(cat *costpower.Catalog, src Source, design string, prompt, token int, model string) (evaluator.Cluster, error) {
	cl, err := cat.NewCluster(design, prompt, token)
	if err != nil {
		return evaluator.Cluster{}, err
	}
	m, err := cat.Model(model)
	if err != nil {
		return evaluator.Cluster{}, err
	}
	out := evaluator.Cluster{Cluster: cl, Model: m}
	src = src.ForSpace(m, []costpower.Machine{cl.PromptType, cl.TokenType})
	if out.PromptPerf, out.PromptProvenance, err = src.Resolve(m, cl.PromptType); err != nil {
		return evaluator.Cluster{}, err
	}
	if out.TokenPerf, out.TokenProvenance, err = src.Resolve(m, cl.TokenType); err != nil {
		return evaluator.Cluster{}, err
	}
	setPowers(&out, src) // power.go
	return out, nil
}
