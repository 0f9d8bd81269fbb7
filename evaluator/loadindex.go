package evaluator

import "math/bits"

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
	base, count [4]int32
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
