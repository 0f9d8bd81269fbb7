package plots

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteAtomicKeepsSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "real.svg")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "fig.svg")
	if err := os.Symlink("real.svg", link); err != nil {
		t.Fatal(err)
	}
	if err := writeAtomic(link, bytes.NewReader([]byte("new"))); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symlink: %v", link, err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Errorf("target holds %q, want new", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d entries left in the directory, want 2", len(ents))
	}
}
