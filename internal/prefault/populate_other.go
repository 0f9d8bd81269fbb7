//go:build !linux

package prefault

// populate does nothing where MADV_POPULATE_WRITE does not exist.
func populate(p, n uintptr) {}
