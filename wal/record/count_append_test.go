package record

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// TestAppendCountEncodesEveryLength holds appendCount, whose lengths
// under 0x80 take a path of their own, to the uvarint of the length on
// both sides of 0x80 and up to MaxListItems, and to its panic past it.
func TestAppendCountEncodesEveryLength(t *testing.T) {
	for _, n := range []int{0, 1, 2, 0x7e, 0x7f, 0x80, 0x81, 0x3fff, 0x4000, MaxListItems - 1, MaxListItems} {
		want := binary.AppendUvarint([]byte{9}, uint64(n))
		if got := appendCount([]byte{9}, n, "items"); !bytes.Equal(got, want) {
			t.Errorf("appendCount(%d) = %x, want %x", n, got, want)
		}
	}
	for _, n := range []int{MaxListItems + 1, 1 << 40} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("appendCount(%d) did not panic", n)
				}
			}()
			appendCount(nil, n, "items")
		}()
	}
}
