package record

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// TestUvarintMatchesByteAtATime compares uvarint, which reads up to 9
// bytes at once, with the byte-at-a-time reading it replaced, on minimal
// and non-minimal encodings of every length, too long and truncated ones,
// at every distance from the end of the input: the value, the offset after
// it and whether it fails must be the same.
func TestUvarintMatchesByteAtATime(t *testing.T) {
	const seed = 20261126
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	var inputs [][]byte
	for bitsLen := 0; bitsLen <= 64; bitsLen++ {
		for range 20 {
			v := r.Uint64()
			if bitsLen < 64 {
				v &= 1<<bitsLen - 1
			}
			enc := binary.AppendUvarint(nil, v)
			inputs = append(inputs, enc)
			// Not minimal: a zero group after the last, continued.
			long := append([]byte(nil), enc...)
			long[len(long)-1] |= 0x80
			inputs = append(inputs, append(long, 0))
		}
	}
	for range 2000 { // random bytes, mostly with the high bit set
		b := make([]byte, 1+r.IntN(12))
		for i := range b {
			b[i] = byte(r.Uint32())
			if r.IntN(4) > 0 {
				b[i] |= 0x80
			}
		}
		inputs = append(inputs, b)
	}
	for _, in := range inputs {
		for tail := range 12 { // bytes after the varint
			b := append(append([]byte(nil), in...), make([]byte, tail)...)
			for cut := 0; cut <= len(b); cut++ {
				got := decoder{b: b[:cut]}
				want := decoder{b: b[:cut]}
				gv, wv := got.uvarint(), want.uvarintSlow()
				if gv != wv || got.off != want.off || (got.err == nil) != (want.err == nil) {
					t.Fatalf("input %x cut at %d: uvarint %d at %d, err %v; byte at a time %d at %d, err %v",
						b, cut, gv, got.off, got.err, wv, want.off, want.err)
				}
			}
		}
	}
}
