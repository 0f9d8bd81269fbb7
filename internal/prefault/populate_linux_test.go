package prefault

import (
	"syscall"
	"testing"
)

// minorFaults is the process's minor page faults so far.
func minorFaults(t *testing.T) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Minflt
}

// TestSliceMapsPages: writing every page of a fresh 8 MB slice faults
// about once a page; after Slice, almost never (where the kernel has
// MADV_POPULATE_WRITE).
func TestSliceMapsPages(t *testing.T) {
	const n = 8 << 20
	pages := int64(n / syscall.Getpagesize())
	touch := func(b []byte) int64 {
		before := minorFaults(t)
		for i := 0; i < len(b); i += syscall.Getpagesize() {
			b[i] = 1
		}
		return minorFaults(t) - before
	}
	plain := touch(make([]byte, n))
	b := make([]byte, n)
	if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, 0, 0, madvPopulateWrite); errno == syscall.EINVAL {
		t.Skip("the kernel has no MADV_POPULATE_WRITE")
	}
	Slice(b)
	mapped := touch(b)
	if plain < pages/2 {
		t.Skipf("writing a fresh slice faulted only %d times for %d pages (huge pages?): nothing to compare", plain, pages)
	}
	if mapped > pages/20 {
		t.Errorf("after Slice, writing %d pages faulted %d times (%d without it)", pages, mapped, plain)
	}
}
