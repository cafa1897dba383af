package wal

import "testing"

// TestLineWarmer: upTo loads one byte of each cache line below the limit,
// never past the buffer's end, and none twice when the limit moves on.
func TestLineWarmer(t *testing.T) {
	b := make([]byte, 1000)
	for i := range b {
		b[i] = byte(i*7 + 3)
	}
	xorLines := func(from, to int) byte {
		var x byte
		for i := from; i < to; i += cacheLineBytes {
			x ^= b[i]
		}
		return x
	}
	tests := []struct {
		name     string
		limits   []int
		wantNext int
		wantSum  byte
	}{
		{"nothing", []int{0}, 0, 0},
		{"one line", []int{1}, 64, b[0]},
		{"to a line's start", []int{128}, 128, b[0] ^ b[64]},
		{"moving on", []int{100, 300, 200, 640}, 640, xorLines(0, 640)},
		{"past the end", []int{4096}, 1024, xorLines(0, 1000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w lineWarmer
			for _, l := range tt.limits {
				w.upTo(b, l)
			}
			if w.next != tt.wantNext || w.sum != tt.wantSum {
				t.Errorf("after upTo%v: next %d sum %#x, want %d %#x", tt.limits, w.next, w.sum, tt.wantNext, tt.wantSum)
			}
		})
	}
}
