package cli

import "splitplan/arch"

// checkQueryTP rejects a tensor parallelism that cannot serve model a on
// a node of gpus GPUs: tp must divide the node's GPUs (a replica does not
// span nodes) and the attention heads (each GPU holds whole heads); the
// key/value heads are split when tp divides them and replicated when
// they divide tp (as vLLM does), any other ratio is unservable. A model
// with latent attention (MLA) caches one latent per token, replicated,
// so only its query heads constrain tp.
func checkQueryTP(a arch.Arch, gpus int, gpu string, tp int) error {
	switch {
	case a.Heads%tp != 0:
		return badInputf("--tp %d: %s has %d attention heads, which %d GPUs cannot share evenly; use a divisor of %d", tp, a.Name, a.Heads, tp, a.Heads)
	case a.KVLoraRank == 0 && a.KVHeads%tp != 0 && tp%a.KVHeads != 0:
		return badInputf("--tp %d: %s has %d key/value heads, which are neither split evenly over nor replicated evenly across %d GPUs", tp, a.Name, a.KVHeads, tp)
	case tp > gpus || gpus%tp != 0:
		return badInputf("--tp %d: each %s node has %d GPUs; the tensor parallelism must divide them (a replica does not span nodes)", tp, gpu, gpus)
	}
	return nil
}
