package evaluator

import (
	"fmt"
	"math"
	"strings"

	"splitplan/evaluator/perf"
)

// PolicyKind is a batching policy of the machine-level scheduler (SPEC
// §5, "Other batching policies"). A policy governs baseline machines and
// Splitwise machines while they are in the mixed pool; machines in the
// prompt or the token pool always follow PolicyMixed's rules.
type PolicyKind int

const (
	// PolicyMixed is Orca-style mixed continuous batching, SPEC §5's five
	// steps: prompts and decodes share iterations, whole prompts at once,
	// the performance model's mixed penalty applies. The default.
	PolicyMixed PolicyKind = iota
	// PolicyRequestLevel is FasterTransformer's request-level batching: a
	// batch is admitted, its prompts run, then it decodes until every
	// request in it has finished; only then is more work admitted.
	PolicyRequestLevel
	// PolicyPrefillFirst is vLLM's prefill-prioritizing iteration-level
	// batching: waiting prompts run first in prompt-only iterations,
	// pausing every decode (generation stalls).
	PolicyPrefillFirst
	// PolicySarathi is Sarathi-Serve's stall-free batching with chunked
	// prefills: every iteration takes the running decodes first, then
	// chunks of prompts, within a token budget.
	PolicySarathi
)

// String is the policy's canonical name, e.g. "sarathi".
func (k PolicyKind) String() string {
	if k >= 0 && int(k) < len(policyTable) {
		return policyTable[k].name
	}
	return fmt.Sprintf("PolicyKind(%d)", int(k))
}

// MarshalText encodes the canonical name.
func (k PolicyKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText parses a policy name (see ParsePolicy).
func (k *PolicyKind) UnmarshalText(b []byte) error {
	p, err := ParsePolicy(string(b))
	if err != nil {
		return err
	}
	*k = p.Kind
	return nil
}

// Policy is a batching policy with its own parameters. The zero value is
// PolicyMixed.
type Policy struct {
	// Kind is the policy.
	Kind PolicyKind
	// TokenBudget is the sarathi policy's token budget per iteration, a
	// decode counting 1 and a prompt chunk its tokens (0: DefaultTokenBudget,
	// 512). Other policies ignore it.
	TokenBudget int
	// TBTSLOS, when positive, makes the sarathi policy derive each machine
	// type's token budget from this time-between-tokens target in seconds
	// instead of using TokenBudget: the largest budget whose iteration
	// time, per the machine's performance model, stays within it; chunks
	// are also shortened so that no iteration's estimated time exceeds it.
	// Other policies ignore it.
	TBTSLOS float64
}

// String is the policy's canonical name (its parameters are not shown).
func (p Policy) String() string { return p.Kind.String() }

// IsDefault reports whether p is the default policy, mixed batching.
func (p Policy) IsDefault() bool { return p.Kind == PolicyMixed }

// validate checks p's parameters.
func (p Policy) validate() error {
	if p.Kind < 0 || int(p.Kind) >= len(policyTable) {
		return fmt.Errorf("unknown batching policy %d (valid: %s)", int(p.Kind), strings.Join(Policies(), ", "))
	}
	if p.TokenBudget < 0 {
		return fmt.Errorf("token budget must be at least 1 token, got %d", p.TokenBudget)
	}
	if p.TBTSLOS < 0 || math.IsNaN(p.TBTSLOS) || math.IsInf(p.TBTSLOS, 0) {
		return fmt.Errorf("TBT SLO must be zero (off) or a positive number of seconds, got %v", p.TBTSLOS)
	}
	return nil
}

// budget is the sarathi token budget when none is derived from a TBT SLO.
func (p Policy) budget() int {
	if p.TokenBudget == 0 {
		return DefaultTokenBudget
	}
	return p.TokenBudget
}

// DefaultTokenBudget is the sarathi policy's token budget per iteration
// when neither Policy.TokenBudget nor Policy.TBTSLOS is given.
const DefaultTokenBudget = 512

// maxDerivedBudget bounds the token budget derived from a TBT SLO.
const maxDerivedBudget = 1 << 16

// batchPolicy is a machine-level batching policy. It wraps the decisions
// that differ between policies; everything else (timing a run, advancing
// requests, memory release) is common to all of them.
type batchPolicy interface {
	// form replaces m.batch with the requests of m's next run, reserving
	// the memory of the prompts it starts and keeping the preemption
	// bookkeeping (m.preempted, m.queue, reqState.preempt).
	form(s *sim, m *machine)
	// cuts reports whether work arriving at m, busy with a decode-only
	// run of several iterations, cuts that run at its next iteration
	// boundary; r is the request the new work belongs to.
	cuts(s *sim, m *machine, r int32) bool
	// reference reports whether the policy is SPEC §5's reference rules
	// (mixed batching), whose run-end bookkeeping counts preemptions.
	reference() bool

	// The policy's shortcuts: ways to start a run without forming its
	// batch. Each starts exactly the run form would start, or declines
	// having changed nothing (the contract in doc.go, which the
	// equivalence tests check); declining is always correct. A policy
	// embeds noShortcuts for those it has not.

	// startAlone starts the run of idle machine m whose only task is r, a
	// whole prompt waiting, and reports true; false, having changed
	// nothing, when it leaves the run to form. (The caller takes r out of
	// m's queue, or never puts it there: see arrive.)
	startAlone(s *sim, m *machine, r int32, now float64) bool
	// decodesJoin reports whether form, given m's previous batch of n
	// running decodes (every one started, none starved), nothing
	// preempted and only decodes queued at m, would form the previous
	// batch followed by the queued decodes, in that order, leaving
	// nothing out: endRun then runs them lazily (lazy.go).
	decodesJoin(s *sim, m *machine, n int) bool
	// joinWaiting forms and starts m's next batch from its previous one
	// of decodes (every one started, starvedKept of them starved,
	// contexts adding up to ctx, the shortest with iters iterations left)
	// and the prompts and decodes waiting at m, nothing preempted, and
	// reports true; false, having changed nothing, when it leaves the
	// batch to form. prefix: the starved decodes kept are the batch's
	// first starvedKept; lazy: m's runs are lazy and stay so (lazy.go).
	joinWaiting(s *sim, m *machine, now float64, ctx int64, iters, starvedKept int, prefix, lazy bool) bool
	// starvedFirst reports whether form takes the starved decodes of the
	// previous batch first, in their order, so that lazy runs may keep
	// them ahead of their batch.
	starvedFirst() bool
}

// noShortcuts is the shortcuts of a policy that has none: every run's
// batch is formed.
type noShortcuts struct{}

func (noShortcuts) startAlone(*sim, *machine, int32, float64) bool { return false }

func (noShortcuts) decodesJoin(*sim, *machine, int) bool { return false }

func (noShortcuts) joinWaiting(*sim, *machine, float64, int64, int, int, bool, bool) bool {
	return false
}

func (noShortcuts) starvedFirst() bool { return false }

// policyEntry names one policy.
type policyEntry struct {
	name    string
	aliases []string
	p       batchPolicy
}

// policyTable lists the policies in PolicyKind order.
var policyTable = [...]policyEntry{
	PolicyMixed:        {"mixed", []string{"orca", "continuous"}, mixedPolicy{}},
	PolicyRequestLevel: {"request-level", []string{"request", "fastertransformer", "ft"}, requestLevelPolicy{}},
	PolicyPrefillFirst: {"prefill-first", []string{"prefill", "prefill-prioritizing", "vllm"}, prefillFirstPolicy{}},
	PolicySarathi:      {"sarathi", []string{"sarathi-serve", "chunked", "chunked-prefill"}, sarathiPolicy{}},
}

// Policies returns the names of the batching policies, the default first.
func Policies() []string {
	out := make([]string, len(policyTable))
	for i, e := range policyTable {
		out[i] = e.name
	}
	return out
}

// PolicyKinds returns the batching policies, the default first.
func PolicyKinds() []PolicyKind {
	out := make([]PolicyKind, len(policyTable))
	for i := range policyTable {
		out[i] = PolicyKind(i)
	}
	return out
}

// ParsePolicy returns batching policy s with default parameters (case and
// surrounding space ignored; a few aliases such as "orca", "vllm" and
// "sarathi-serve" accepted). The empty string is the default, PolicyMixed.
// The error names s and lists the valid policies.
func ParsePolicy(s string) (Policy, error) {
	k := strings.ToLower(strings.TrimSpace(s))
	if k == "" {
		return Policy{}, nil
	}
	for i := range policyTable {
		e := &policyTable[i]
		if k == e.name {
			return Policy{Kind: PolicyKind(i)}, nil
		}
		for _, a := range e.aliases {
			if k == a {
				return Policy{Kind: PolicyKind(i)}, nil
			}
		}
	}
	return Policy{}, fmt.Errorf("unknown batching policy %q (valid: %s)", s, strings.Join(Policies(), ", "))
}

// policyFor returns the rules machine m follows now: the simulation's
// policy on baseline and mixed-pool machines, mixed batching in the prompt
// and token pools.
func (s *sim) policyFor(m *machine) batchPolicy {
	if m.pool == poolPrompt || m.pool == poolToken {
		return mixedPolicy{}
	}
	return s.policy
}

// builder accumulates one batch of machine m under its limits. Its take
// methods return false when the step that called them must stop (the task
// is over a limit or its KV-cache does not fit); a task already in the
// batch is skipped (true).
type builder struct {
	s      *sim
	st     []reqState // s.st
	m      *machine
	stamp  uint32
	prev   []int32 // the previous batch
	next   []int32 // the batch being formed
	maxReq int
	maxTok int
	tokens int // a decode counts 1, a prompt (chunk) its tokens
	// hasPrompt reports whether a prompt (or chunk) is in the batch.
	hasPrompt bool
	// The batch's composition, for sarathi's iteration-time check.
	prompts, decodes int
	ctx              int64
	extra            float64
}

// newBuilder starts forming m's next batch with a token cap of maxTok.
func (s *sim) newBuilder(m *machine, maxTok int) builder {
	s.stamp++
	return builder{s: s, st: s.st, m: m, stamp: s.stamp, prev: m.batch, next: m.spare[:0],
		maxReq: s.opt.MaxBatchRequests, maxTok: maxTok}
}

// isDecode reports whether r's next task here is a decode iteration.
func (b *builder) isDecode(r int32) bool {
	ph := b.s.st[r].phase
	return ph == phDecoding || ph == phQueued
}

// kvNeed is the KV-cache m commits when the prompt of st starts there:
// the prompt's, and the output's too if it decodes on m.
func (m *machine) kvNeed(st *reqState) int64 {
	if st.tm == m.id {
		return st.promptKV + st.outputKV
	}
	return st.promptKV
}

// commitKV commits kvNeed(st) on m and holds the prompt's KV-cache.
func (m *machine) commitKV(st *reqState) {
	m.committed += m.kvNeed(st)
	m.used += st.promptKV
}

// fitsKV reports whether kvNeed(st) fits in what m has not committed.
func (m *machine) fitsKV(st *reqState) bool {
	return m.committed+m.kvNeed(st) <= m.capacity
}

// reserve commits the KV-cache of st's prompt on m (commitKV) when it
// fits. Every way a prompt starts goes through it or, having checked the
// fit itself, through commitKV; a KV-cache transfer checks fitsKV and
// commits with commitKV at the token machine.
func (m *machine) reserve(st *reqState) bool {
	if !m.fitsKV(st) {
		return false
	}
	m.commitKV(st)
	return true
}

// take adds r under mixed batching's rules: a prompt whole (the first
// prompt of a batch whatever its length), a decode as one token.
func (b *builder) take(r int32) bool {
	st := &b.st[r]
	if st.mark == b.stamp {
		return true
	}
	if len(b.next) >= b.maxReq {
		return false
	}
	if st.phase == phWaiting || st.phase == phPrompt {
		c := int(st.prompt - st.prefilled)
		if b.tokens+c > b.maxTok && b.hasPrompt {
			return false // the first prompt is taken whatever its length (SPEC §5)
		}
		if st.phase == phWaiting && !b.m.reserve(st) {
			return false
		}
		st.chunk = int32(c)
		b.tokens += c
		b.prompts += c
		b.hasPrompt = true
	} else {
		if b.tokens+1 > b.maxTok {
			return false
		}
		b.tokens++
		b.decodes++
		b.ctx += int64(st.prompt) + int64(st.generated)
	}
	st.mark = b.stamp
	b.next = append(b.next, r)
	return true
}

// takeChunk adds the next chunk of r's prompt (sarathi): as many of its
// remaining tokens as the token budget leaves room for, shortened further
// when the machine has an iteration-time limit. An empty batch always
// takes a chunk of at least one token, so prefill progresses.
func (b *builder) takeChunk(r int32) bool {
	st := &b.st[r]
	if st.mark == b.stamp {
		return true
	}
	if len(b.next) >= b.maxReq {
		return false
	}
	c := min(int(st.prompt-st.prefilled), b.maxTok-b.tokens)
	if c <= 0 {
		return false
	}
	if b.m.limitS > 0 {
		if c = b.fitTime(st, c); c <= 0 {
			if len(b.next) > 0 {
				return false
			}
			c = 1
		}
	}
	if st.phase == phWaiting && !b.m.reserve(st) {
		return false
	}
	e, _ := chunkExtra(b.m.perf, int(st.prefilled), c)
	st.chunk = int32(c)
	b.tokens += c
	b.prompts += c
	b.extra += e
	b.hasPrompt = true
	st.mark = b.stamp
	b.next = append(b.next, r)
	return true
}

// fitTime returns the longest chunk of r of at most c tokens with which
// the batch's iteration time stays within the machine's limit, or 0. It
// assumes the time grows with the chunk (bisection).
func (b *builder) fitTime(st *reqState, c int) int {
	fits := func(n int) bool {
		d, _ := iterTime(b.m.perf, b.prompts+n, b.decodes, b.ctx)
		e, _ := chunkExtra(b.m.perf, int(st.prefilled), n)
		return d+b.extra+e <= b.m.limitS
	}
	if fits(c) {
		return c
	}
	lo, hi := 0, c // fits(lo) (or lo == 0), !fits(hi)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// settle ends the formation: the requests of the previous batch and the
// preempted ones that were left out wait in m.preempted, and every
// pending request left out counts one preemption (SPEC §5) — except where
// a policy leaves work out by design: with decodes unset (a prefill-first
// prompt iteration) decodes left out are paused, not preempted; with
// prompts unset (sarathi) prompts left out, new or partly prefilled, wait
// their turn behind the token budget first come first served. Those do
// not count.
func (b *builder) settle(decodes, prompts bool) {
	s, m, stamp := b.s, b.m, b.stamp
	if len(b.next) == len(b.prev)+len(m.preempted)+len(m.queue) {
		// Every task was taken (the three lists are disjoint and the
		// batch holds nothing else): nothing is left out to count.
		m.preempted = m.preempted[:0]
		m.queue = m.queue[:0]
		m.spare = b.prev[:0]
		m.batch = b.next
		return
	}
	count := func(st *reqState) {
		if d := st.phase == phDecoding || st.phase == phQueued; d && decodes || !d && prompts {
			st.preempt++
			st.preemptTotal++
		}
	}
	keep := m.preempted[:0]
	for _, r := range m.preempted {
		if st := &s.st[r]; st.mark != stamp {
			count(st)
			keep = append(keep, r)
		}
	}
	for _, r := range b.prev {
		if st := &s.st[r]; st.mark != stamp {
			count(st)
			keep = append(keep, r)
		}
	}
	m.preempted = keep
	q := m.queue[:0]
	for _, r := range m.queue {
		if st := &s.st[r]; st.mark != stamp {
			count(st)
			q = append(q, r)
		}
	}
	m.queue = q
	m.spare = b.prev[:0]
	m.batch = b.next
}

// starvationGuard is step 1 of mixed batching: whatever has been left
// out MaxPreemptions times goes first — running decodes (so a starved
// request keeps its priority while it runs), then preempted decodes, then
// waiting tasks — each list stopping at the first task over a limit or
// whose KV-cache does not fit.
func (b *builder) starvationGuard() {
	prev := b.prev
	if b.m.noneStarved {
		prev = nil // endRun saw no starved task in it
	}
	for _, list := range [3][]int32{prev, b.m.preempted, b.m.queue} {
		for _, r := range list {
			if b.starved(r) && !b.take(r) {
				break
			}
		}
	}
}

// starved reports whether r has been left out often enough to go first.
func (b *builder) starved(r int32) bool {
	return b.s.starved(&b.st[r])
}

// iterTime is the duration of one iteration holding prompts prompt tokens
// (whole prompts or chunks) and decodes decoding requests whose contexts
// add up to ctx, before any chunk overhead.
func iterTime(pm perf.IterationModel, prompts, decodes int, ctx int64) (float64, bool) {
	switch {
	case prompts > 0 && decodes > 0:
		return pm.MixedTime(prompts, decodes, ctx)
	case prompts > 0:
		return pm.PromptTime(prompts)
	default:
		return pm.DecodeTime(decodes, ctx)
	}
}

// chunkExtra is the overhead of prefilling a chunk of c prompt tokens
// after prior tokens of the same prompt were prefilled in earlier
// iterations: the attention of the chunk's tokens re-reads the KV-cache of
// the earlier chunks.
//
// It is modelled from the prompt curve T of the performance model. A
// chunk is charged max(T(c), T(prior+c) − T(prior)): the prompt time of
// its own tokens, or, when more, the marginal time of growing the prompt
// from prior to prior+c tokens — the superlinear part of the prompt curve
// is the attention over the whole context, which is exactly what the
// re-read of the earlier chunks' KV-cache costs. The iteration already
// pays T(c) through its token count (the batch's prompt or mixed time),
// so the extra is max(0, T(prior+c) − T(prior) − T(c)); a whole prompt
// (prior = 0) has none, and a chunk never costs less than T(c). On the
// built-in BLOOM-176B curves the extra is zero while prior+c stays within
// about 2048 tokens (where the curve is close to linear) and grows beyond.
func chunkExtra(pm perf.IterationModel, prior, c int) (float64, bool) {
	if prior <= 0 || c <= 0 {
		return 0, false
	}
	whole, ex1 := pm.PromptTime(prior + c)
	before, ex2 := pm.PromptTime(prior)
	alone, ex3 := pm.PromptTime(c)
	return max(0, whole-before-alone), ex1 || ex2 || ex3
}

// budgetTime is the iteration time deriveBudget bounds: an iteration of
// budget tokens made of one running decode and budget − 1 prompt tokens,
// MixedTime(budget − 1, 1). The built-in models charge a mixed iteration
// by its total tokens, so the number of decodes assumed does not matter
// to them; one decode is the least an iteration needs to produce a TBT.
// A budget of one token is a decode-only iteration.
func budgetTime(pm perf.IterationModel, budget int) float64 {
	if budget <= 1 {
		d, _ := pm.DecodeTime(1, 0)
		return d
	}
	d, _ := pm.MixedTime(budget-1, 1, 0)
	return d
}

// deriveBudget returns the largest token budget (at most 65536) whose
// iteration time (budgetTime) on performance model pm stays within
// tbtS, by bisection (iteration time grows with the tokens). machine names
// the machine type in the error when not even one token fits.
func deriveBudget(pm perf.IterationModel, tbtS float64, machine string) (int, error) {
	if t := budgetTime(pm, 1); t > tbtS {
		return 0, fmt.Errorf("sarathi: a TBT SLO of %g s is shorter than one decode iteration on %s (%.4g s)", tbtS, machine, t)
	}
	lo, hi := 1, maxDerivedBudget
	if budgetTime(pm, hi) <= tbtS {
		return hi, nil
	}
	for hi-lo > 1 { // budgetTime(lo) ≤ tbtS < budgetTime(hi)
		mid := lo + (hi-lo)/2
		if budgetTime(pm, mid) <= tbtS {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// setBudgets gives every machine its sarathi token budget and iteration
// time limit.
func (s *sim) setBudgets() error {
	pol := s.cl.Policy
	if pol.Kind != PolicySarathi {
		return nil
	}
	if pol.TBTSLOS <= 0 {
		for i := range s.m {
			s.m[i].budget = pol.budget()
		}
		return nil
	}
	var pb, tb int
	var err error
	if pb, err = deriveBudget(s.cl.PromptType.Perf, pol.TBTSLOS, s.cl.PromptType.Name); err != nil {
		return err
	}
	if tb, err = deriveBudget(s.cl.TokenType.Perf, pol.TBTSLOS, s.cl.TokenType.Name); err != nil {
		return err
	}
	for i := range s.m {
		m := &s.m[i]
		m.budget, m.limitS = pb, pol.TBTSLOS
		if m.home == poolToken {
			m.budget = tb
		}
	}
	return nil
}

// SarathiBudgets returns the token budget per iteration that the sarathi
// policy uses on cl's prompt and token machine types (for a baseline both
// are the same): cl.Policy.TokenBudget (default 512), or the budget
// derived from cl.Policy.TBTSLOS.
func SarathiBudgets(cl Cluster) (prompt, token int, err error) {
	pol := cl.Policy
	if err := pol.validate(); err != nil {
		return 0, 0, err
	}
	if pol.TBTSLOS <= 0 {
		return pol.budget(), pol.budget(), nil
	}
	if cl.PromptType.Perf == nil || cl.TokenType.Perf == nil {
		return 0, 0, fmt.Errorf("cluster has no performance model")
	}
	if prompt, err = deriveBudget(cl.PromptType.Perf, pol.TBTSLOS, cl.PromptType.Name); err != nil {
		return 0, 0, err
	}
	if token, err = deriveBudget(cl.TokenType.Perf, pol.TBTSLOS, cl.TokenType.Name); err != nil {
		return 0, 0, err
	}
	return prompt, token, nil
}

// takeStarvedDecodes takes the starved decodes of the previous batch, then
// the preempted, then the queued, each list up to its first that does not
// fit (the starvation guard of the policies that never preempt a prompt).
func (b *builder) takeStarvedDecodes(m *machine) {
	for _, list := range [3][]int32{b.prev, m.preempted, m.queue} {
		for _, r := range list {
			if b.isDecode(r) && b.starved(r) && !b.take(r) {
				break
			}
		}
	}
}

// takeRunningDecodes takes the decodes preempted, then those of the
// previous batch, then the queued, each list up to its first that does
// not fit.
func (b *builder) takeRunningDecodes(m *machine) {
	for _, list := range [3][]int32{m.preempted, b.prev, m.queue} {
		for _, r := range list {
			if b.isDecode(r) && !b.take(r) {
				break
			}
		}
	}
}
