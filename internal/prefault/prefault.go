package prefault

import "unsafe"

// MinBytes is the smallest slice worth a system call: smaller ones are
// left to fault in page by page.
const MinBytes = 64 << 10

// Slice maps the whole pages of s's backing array (to its capacity) for
// writing, as a write to each would, without changing its contents. It
// does nothing on systems without the call (other than Linux 5.14 and
// later) and for slices under MinBytes. Call it on a slice just made and
// about to be filled.
func Slice[T any](s []T) {
	var zero T
	n := uintptr(cap(s)) * unsafe.Sizeof(zero)
	if n < MinBytes {
		return
	}
	populate(uintptr(unsafe.Pointer(unsafe.SliceData(s))), n)
}
