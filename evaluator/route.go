package evaluator

import "math/bits"

// route is Splitwise's cluster-level scheduler (SPEC §5).
func (s *sim) route(st *reqState) (pm, tm *machine) {
	need := st.promptKV + st.outputKV
	queueLong := func(m *machine) bool {
		return len(m.queue)+len(m.preempted) > 0 && s.load[m.id][byPending]+int64(st.prompt) > int64(s.opt.PromptQueueTokens)
	}
	memLoaded := func(m *machine) bool { return s.load[m.id][byMemory]+need >= m.capacity }
	if m := s.leastPending(poolPrompt); m != nil && !queueLong(m) {
		pm = m
	}
	if pm == nil {
		if m := s.leastPending(poolMixed); m != nil && !queueLong(m) {
			pm = m
		}
	}
	if m := s.leastMemory(poolToken); m != nil && !memLoaded(m) {
		tm = m
	}
	if tm == nil {
		if m := s.leastMemory(poolMixed); m != nil && !memLoaded(m) {
			tm = m
		}
	}
	if pm == nil {
		if m := s.leastPending(poolToken); m != nil {
			s.move(m, poolMixed)
			pm = m
		}
	}
	if tm == nil {
		if m := s.leastMemory(poolPrompt); m != nil {
			s.move(m, poolMixed)
			tm = m
		}
	}
	if pm == nil || tm == nil {
		// Still none: the whole request on the least-loaded machine of
		// the prompt, mixed and token pools, in that order.
		pm = nil
		for _, pool := range [3]int8{poolPrompt, poolMixed, poolToken} {
			if m := s.leastPending(pool); m != nil && (pm == nil || s.load[m.id][byPending] < s.load[pm.id][byPending]) {
				pm = m
			}
		}
		tm = pm
	}
	st.borrowed = pm.pool == poolMixed || tm.pool == poolMixed
	return pm, tm
}

// machineLoad is what the cluster scheduler weighs a machine by, by kind
// of load: [byPending] the prompt tokens not yet prefilled plus the
// requests decoding, [byMemory] the cluster scheduler's bookkeeping of
// reserved memory. (An array, so that the scans for either take the kind
// as an index, not a test at every machine.)
type machineLoad [2]int64

// leastPending is the machine of pool with the fewest pending tokens, the
// first in the pool's order among equals; nil for an empty pool.
func (s *sim) leastPending(pool int8) *machine { return s.leastLoaded(pool, byPending) }

// leastMemory is the machine of pool with the least reserved memory, the
// first in the pool's order among equals; nil for an empty pool.
func (s *sim) leastMemory(pool int8) *machine { return s.leastLoaded(pool, byMemory) }

// leastLoaded is the machine of pool with the least load of kind k
// (byPending, byMemory): the first in the pool's order among equals; nil
// for an empty pool.
func (s *sim) leastLoaded(pool int8, k int) *machine {
	ids := s.pools[pool]
	if len(ids) == 0 {
		return nil
	}
	inOrder := s.inOrder[pool]
	if inOrder && k == byPending {
		// With pending tokens, a machine with none is the answer, found
		// in the bitmap a word at a time.
		if i := s.firstUnloaded(int(ids[0]), int(ids[0])+len(ids)); i >= 0 {
			return &s.m[i]
		}
	}
	switch {
	case s.indexed[pool]:
		return &s.m[ids[s.leastByBlock(pool, k)]]
	case inOrder:
		// Consecutive machines: straight from the dense load array.
		lo := int(ids[0])
		l := s.load[lo : lo+len(ids)]
		k &= 1 // (a kind is 0 or 1: the loop checks no bound on it)
		best, bv := 0, l[0][k]
		for i := 1; i < len(l); i++ {
			if v := l[i][k]; v < bv {
				best, bv = i, v
			}
		}
		return &s.m[lo+best]
	default:
		// Pools fall out of order under load, when machines move, in
		// every search.
		return &s.m[ids[s.leastAmong(ids, 0, len(ids), k)]]
	}
}

// leastAmong is the position of the first least load of kind k of the
// machines ids[lo:hi] (not empty).
func (s *sim) leastAmong(ids []int32, lo, hi int, k int) int {
	k &= 1 // (as leastLoaded's loop)
	best, bv := lo, s.load[ids[lo]][k]
	for p := lo + 1; p < hi; p++ {
		if v := s.load[ids[p]][k]; v < bv {
			best, bv = p, v
		}
	}
	return best
}

// addPending adds d to machine id's pending tokens.
func (s *sim) addPending(id int32, d int64) {
	p := &s.load[id][byPending]
	*p += d
	if s.anyIndexed {
		s.blocks.mark(id, byPending)
	}
	w, b := id>>6, uint64(1)<<(id&63)
	if *p == 0 {
		s.unloaded[w] |= b
	} else {
		s.unloaded[w] &^= b
	}
}

// firstUnloaded is the first machine of ids lo to hi−1 with no pending
// tokens, or −1.
func (s *sim) firstUnloaded(lo, hi int) int {
	for w := lo >> 6; w<<6 < hi; w++ {
		x := s.unloaded[w]
		if w == lo>>6 {
			x &^= 1<<(lo&63) - 1 // below lo
		}
		if x != 0 {
			if i := w<<6 + bits.TrailingZeros64(x); i < hi {
				return i
			}
			return -1
		}
	}
	return -1
}

// setInOrder updates inOrder for pool.
func (s *sim) setInOrder(pool int8) {
	ids := s.pools[pool]
	s.inOrder[pool] = true
	for i := 1; i < len(ids); i++ {
		if ids[i] != ids[0]+int32(i) {
			s.inOrder[pool] = false
			return
		}
	}
}

// leastOf is the id of ids with the least key, the first among equals; −1
// when ids is empty. The compat scheduler routes with it (the default
// one's leastLoaded loops without a call per machine).
func leastOf(ids []int32, key func(id int32) int64) int32 {
	best, v := int32(-1), int64(0)
	for _, id := range ids {
		if k := key(id); best < 0 || k < v {
			best, v = id, k
		}
	}
	return best
}

// move takes m out of its pool and appends it to pool to: a routing
// move (into or out of the mixed pool), counted in PoolMoves.
func (s *sim) move(m *machine, to int8) {
	s.relocate(m, to)
	m.moves++
	s.out.PoolMoves++
}

// relocate takes m out of its pool and appends it to pool to, uncounted
// (move counts a routing move; scaling relocates machines in and out of
// service).
func (s *sim) relocate(m *machine, to int8) {
	p := s.pools[m.pool]
	for i, id := range p {
		if id == m.id {
			s.pools[m.pool] = append(p[:i], p[i+1:]...)
			break
		}
	}
	s.pools[to] = append(s.pools[to], m.id)
	s.setInOrder(m.pool)
	s.setInOrder(to)
	m.pool = to
	s.reindex()
}

// Pools of many machines keep, for each block of blockSize consecutive
// positions (in the pool's order), the position of the block's first
// least load — pending tokens and reserved memory apart. The
// least-loaded machine of the pool is then the first least of its
// blocks' (a scan of n/blockSize values). A change of load only marks
// its block (a bit); a query first finds the least of each block marked
// since the last one. A plain scan reads every machine of the pool on
// every arrival: in a design space of single-GPU machines (replicas),
// pools of hundreds, under loads where none is idle.
const (
	blockBits = 4
	blockSize = 1 << blockBits
	// indexMin is the least number of machines for which a pool keeps
	// its blocks' least loads, half as many for a pool out of order
	// (whose scan reads each machine's load through its id, and finds no
	// idle machine in the bitmap); smaller pools are scanned.
	indexMin = 64
)

// blockIndex is the block bookkeeping of the indexed pools. The blocks
// of all pools are numbered together: pool p's are base[p] to
// base[p]+count[p]−1 (count 0 for a pool not indexed), and the number
// after the last is the block of every machine of a pool not indexed
// (marked, never read).
type blockIndex struct {
	base, count [5]int32
	// of[id] is machine id's block.
	of []int32
	// least[k][b] is the position in its pool of the first least load
	// of block b (k: byPending, byMemory), up to date unless b is marked
	// in stale[k].
	least [2][]int32
	stale [2][]uint64
}

// The kinds of load: machineLoad's index, and what a pool is indexed by
// (blockIndex.least, .stale).
const (
	byPending = 0
	byMemory  = 1
)

// mark notes that machine id's load of kind k changed.
func (x *blockIndex) mark(id int32, k int) {
	b := x.of[id]
	x.stale[k][b>>6] |= 1 << (b & 63)
}

// reindex numbers the pools' blocks and sets every machine's block, a
// pool of at least indexMin machines having blocks; it runs when the pools
// are formed and whenever a machine moves (the machines after it in its
// old and new pool change blocks). Every block is found stale.
func (s *sim) reindex() {
	x := &s.blocks
	from := indexMin
	if s.opt.indexFrom > 0 {
		from = s.opt.indexFrom
	}
	var n int32
	for p, ids := range s.pools {
		x.base[p], x.count[p] = n, 0
		s.indexed[p] = len(ids) >= from || !s.inOrder[p] && len(ids) >= from/2
		if s.indexed[p] {
			x.count[p] = int32((len(ids) + blockSize - 1) >> blockBits)
			n += x.count[p]
		}
	}
	sink := n
	s.anyIndexed = n > 0
	words := int(n>>6) + 1
	for k := range 2 {
		x.least[k] = growTo(x.least[k], int(n))
		x.stale[k] = growTo(x.stale[k], words)
		for w := range x.stale[k] {
			x.stale[k][w] = ^uint64(0)
		}
	}
	x.of = growTo(x.of, len(s.m))
	for p, ids := range s.pools {
		for i, id := range ids {
			x.of[id] = sink
			if s.indexed[p] {
				x.of[id] = x.base[p] + int32(i>>blockBits)
			}
		}
	}
}

// growTo returns s with length n, reusing its array when it is large
// enough.
func growTo[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}

// leastByBlock is the position of the first least load of kind k
// (byPending, byMemory) of indexed pool p: the stale blocks' least found
// again, then the first least of the blocks' (the blocks in the pool's
// order).
func (s *sim) leastByBlock(p int8, k int) int {
	x, ids := &s.blocks, s.pools[p]
	lo, hi := int(x.base[p]), int(x.base[p]+x.count[p])
	least, stale := x.least[k], x.stale[k]
	for w := lo >> 6; w<<6 < hi; w++ {
		m := ^uint64(0)
		if w == lo>>6 {
			m &^= 1<<(lo&63) - 1 // below lo
		}
		if end := hi - w<<6; end < 64 {
			m &= 1<<end - 1 // from hi
		}
		for y := stale[w] & m; y != 0; y &= y - 1 {
			b := w<<6 + bits.TrailingZeros64(y)
			least[b] = s.leastOfBlock(ids, b-lo, k)
		}
		stale[w] &^= m
	}
	best := least[lo]
	k &= 1 // (as leastLoaded's loop)
	bv := s.load[ids[best]][k]
	for _, a := range least[lo+1 : hi] {
		if v := s.load[ids[a]][k]; v < bv {
			best, bv = a, v
		}
	}
	return int(best)
}

// leastOfBlock is the position of the first least load of kind k of
// block b of the pool ids.
func (s *sim) leastOfBlock(ids []int32, b int, k int) int32 {
	return int32(s.leastAmong(ids, b<<blockBits, min((b+1)<<blockBits, len(ids)), k))
}

// addSchedMem adds d to machine id's reserved memory (the cluster
// scheduler's bookkeeping).
func (s *sim) addSchedMem(id int32, d int64) {
	s.load[id][byMemory] += d
	if s.anyIndexed {
		s.blocks.mark(id, byMemory)
	}
}
