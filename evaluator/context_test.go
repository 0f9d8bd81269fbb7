package evaluator

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"splitplan/traces"
)

func TestEvaluateContext(t *testing.T) {
	d, err := traces.Builtin("conversation")
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := traces.Synthesize(d, 20, 600, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	cl := mustCluster(t, "HH", 6, 3, "bloom-176b", false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res, err := EvaluateContext(ctx, cl, reqs, Options{}); !errors.Is(err, context.Canceled) || res != nil {
		t.Errorf("cancelled: result %v, error %v; want none and context.Canceled", res != nil, err)
	}
	// Not cancelled, it is Evaluate.
	a, err := Evaluate(cl, reqs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := EvaluateContext(context.Background(), cl, reqs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Events != b.Events || !reflect.DeepEqual(a.Requests, b.Requests) {
		t.Error("EvaluateContext without a cancel differs from Evaluate")
	}
	if a.Events < ctxCheckEvents {
		t.Errorf("%d events: too few to reach a context check", a.Events)
	}
}
