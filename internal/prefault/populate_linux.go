package prefault

import (
	"syscall"
	"unsafe"
)

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14): fault the pages
// of a range in, writable, as writes would.
const madvPopulateWrite = 23

var pageBytes = uintptr(syscall.Getpagesize())

// populate maps the whole pages within [p, p+n). An error (an older
// kernel: EINVAL) leaves them to fault in as they are written. Memory the
// allocator reused and cleared is mapped already (its clearing wrote every
// page): when the range's first and last pages are both in memory, it asks
// nothing (the call would still walk every page: ≈ 0.14 ms for a 1 MB
// result slice, each simulation of a benchmark loop or a search).
func populate(p, n uintptr) {
	start := (p + pageBytes - 1) &^ (pageBytes - 1)
	end := (p + n) &^ (pageBytes - 1)
	if end <= start || resident(start) && resident(end-pageBytes) {
		return
	}
	syscall.Syscall(syscall.SYS_MADVISE, start, end-start, madvPopulateWrite)
}

// resident reports whether the page at p (page-aligned) is in memory
// (mincore); false when the call fails.
func resident(p uintptr) bool {
	var v [1]byte
	_, _, errno := syscall.Syscall(syscall.SYS_MINCORE, p, pageBytes, uintptr(unsafe.Pointer(&v[0])))
	return errno == 0 && v[0]&1 != 0
}
