package prefault

import (
	"syscall"
	"testing"
	"unsafe"
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

// TestResident: a page of a fresh anonymous mapping is not in memory
// until written, and is after; so a slice the allocator cleared is left
// alone and a fresh one is populated.
func TestResident(t *testing.T) {
	page := syscall.Getpagesize()
	b, err := syscall.Mmap(-1, 0, 4*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skip("mmap:", err)
	}
	defer syscall.Munmap(b)
	p := func(i int) uintptr { return uintptr(unsafe.Pointer(&b[i*page])) }
	if resident(p(0)) || resident(p(3)) {
		t.Fatal("pages of a fresh mapping are in memory before any write")
	}
	b[0] = 1
	if !resident(p(0)) || resident(p(3)) {
		t.Errorf("after writing page 0: resident %v, page 3 %v; want true, false", resident(p(0)), resident(p(3)))
	}
	populate(p(0), uintptr(4*page)) // page 3 not in memory: populates
	if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, 0, 0, madvPopulateWrite); errno != syscall.EINVAL {
		for i := range 4 {
			if !resident(p(i)) {
				t.Errorf("after populate, page %d is not in memory", i)
			}
		}
	}
	if b[0] != 1 {
		t.Errorf("populate changed a written byte: %d", b[0])
	}
}
