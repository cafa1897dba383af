package vfs

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestReadFileInto: the whole file comes back, in the buffer given when it
// is large enough, in a new one when not; a missing file is an error.
func TestReadFileInto(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	want := bytes.Repeat([]byte("segment"), 1000)
	if err := os.WriteFile(name, want, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		buf    []byte
		reused bool
	}{
		{"nil buffer", nil, false},
		{"small buffer", make([]byte, 10), false},
		{"large buffer", make([]byte, 1, 2*len(want)), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := osFS{}.ReadFileInto(name, tc.buf)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("ReadFileInto: %d bytes, %v; want %d bytes", len(got), err, len(want))
			}
			if reused := cap(tc.buf) > 0 && &got[0] == &tc.buf[:1][0]; reused != tc.reused {
				t.Fatalf("buffer reused %v, want %v", reused, tc.reused)
			}
		})
	}
	if _, err := (osFS{}).ReadFileInto(name+"-missing", nil); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v, want not exist", err)
	}
}
