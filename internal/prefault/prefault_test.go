package prefault

import "testing"

// TestSliceKeepsContents: mapping a slice's pages changes none of its
// elements, zero or written, nor anything around it, at any size and
// alignment.
func TestSliceKeepsContents(t *testing.T) {
	for _, n := range []int{0, 1, 100, MinBytes/8 - 1, MinBytes / 8, MinBytes/8 + 3, 1 << 17, 3<<18 + 5} {
		s := make([]int64, n)
		for i := range s {
			if i%3 == 0 {
				s[i] = int64(i) * 7
			}
		}
		Slice(s)
		Slice(s[:0])
		for i, v := range s {
			want := int64(0)
			if i%3 == 0 {
				want = int64(i) * 7
			}
			if v != want {
				t.Fatalf("n %d: element %d is %d after Slice, want %d", n, i, v, want)
			}
		}
		b := make([]byte, n+1)
		Slice(b[1:])
		for i, v := range b {
			if v != 0 {
				t.Fatalf("n %d: byte %d of a fresh slice is %d after Slice", n, i, v)
			}
		}
	}
}
