package evaluator

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"splitplan/traces"
)

func TestEvaluateContext(t *testing.T) {
	t.Parallel()
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

// TestEvaluateProgress: Options.Progress is called every ctxCheckEvents
// events, in both schedulers, with a simulated time that never goes back
// and stays within the run; it changes nothing in the result.
func TestEvaluateProgress(t *testing.T) {
	t.Parallel()
	d, err := traces.Builtin("conversation")
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := traces.Synthesize(d, 20, 600, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, compat := range []bool{false, true} {
		cl := mustCluster(t, "HH", 6, 3, "bloom-176b", compat)
		opt := Options{Compat: compat}
		plain, err := Evaluate(cl, reqs, opt)
		if err != nil {
			t.Fatal(err)
		}
		var times []float64
		opt.Progress = func(s float64) { times = append(times, s) }
		res, err := EvaluateContext(context.Background(), cl, reqs, opt)
		if err != nil {
			t.Fatal(err)
		}
		if want := int(res.Events / ctxCheckEvents); len(times) < want/2 || len(times) > 2*want+1 { // compat counts deleted events too
			t.Errorf("compat %v: %d progress calls for %d events, want about %d", compat, len(times), res.Events, want)
		}
		end := 0.0
		for _, r := range res.Requests {
			end = max(end, r.ArrivalS+r.E2ES)
		}
		last := 0.0
		for _, s := range times {
			if s < last || s > end {
				t.Errorf("compat %v: progress at %v s after %v s", compat, s, last)
			}
			last = s
		}
		if plain.Events != res.Events || !reflect.DeepEqual(plain.Requests, res.Requests) {
			t.Errorf("compat %v: a progress callback changed the result", compat)
		}
	}
}
