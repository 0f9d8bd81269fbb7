// Package gpuprofile holds the contract test of the user-run GPU profiler
// profile.py beside it (Python 3 + PyTorch, not needed to build splitplan):
// the tables it writes must have the columns, kinds and meta.json keys of the
// shared H100 measurement that perf fit --kernels reads. It has no code of
// its own.
package gpuprofile
