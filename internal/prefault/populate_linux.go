package prefault

import "syscall"

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14): fault the pages
// of a range in, writable, as writes would.
const madvPopulateWrite = 23

var pageBytes = uintptr(syscall.Getpagesize())

// populate maps the whole pages within [p, p+n). An error (an older
// kernel: EINVAL) leaves them to fault in as they are written.
func populate(p, n uintptr) {
	start := (p + pageBytes - 1) &^ (pageBytes - 1)
	end := (p + n) &^ (pageBytes - 1)
	if end > start {
		syscall.Syscall(syscall.SYS_MADVISE, start, end-start, madvPopulateWrite)
	}
}
