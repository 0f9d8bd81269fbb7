package evaluator

import (
	"testing"
	"unsafe"
)

// TestReqStateLayout keeps the request state at two cache lines with the
// scheduler's hot fields in the first.
func TestReqStateLayout(t *testing.T) {
	t.Parallel()
	var st reqState
	if s := unsafe.Sizeof(st); s != 128 {
		t.Errorf("reqState is %d bytes, want 128", s)
	}
	if o := unsafe.Offsetof(st.borrowed) + unsafe.Sizeof(st.borrowed); o > 64 {
		t.Errorf("hot fields end at byte %d, past the first cache line", o)
	}
}
