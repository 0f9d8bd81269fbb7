package evaluator

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestInsertByArrival: inserting into a queue kept in request order puts
// the request where the sorted order wants it — behind every earlier
// request, ahead of every later one — whether it goes last, a few places
// back, or far back in a long queue (where insertByArrival bisects).
func TestInsertByArrival(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 11))
	for trial := range 3000 {
		n := rng.IntN(40)
		if trial%10 == 0 {
			n = rng.IntN(3000)
		}
		// Distinct requests in slots in no particular order.
		reqs := rng.Perm(2*n + 2)[:n+1]
		s := &sim{st: make([]reqState, n+1)}
		for slot, req := range reqs {
			s.st[slot].req = int32(req)
		}
		slots := make([]int32, n)
		for i := range slots {
			slots[i] = int32(i)
		}
		slices.SortFunc(slots, func(a, b int32) int { return int(s.st[a].req - s.st[b].req) })
		r := int32(n) // the last slot is the one inserted
		want := slices.Clone(slots)
		at, _ := slices.BinarySearchFunc(want, s.st[r].req, func(slot, req int32) int { return int(s.st[slot].req - req) })
		want = slices.Insert(want, at, r)
		got := s.insertByArrival(slots, r)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: n %d, inserting request %d: got %v, want %v", trial, n, s.st[r].req, got, want)
		}
	}
}
