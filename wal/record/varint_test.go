package record

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"marketd/core/money"
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

// TestAppendAmountsMatchesBinary compares appendAmounts with
// binary.AppendVarint, whose bytes the format is defined by, on runs of
// amounts of every bit length and both signs, from none to a book's
// nine, appended after some bytes to slices with no spare capacity and
// with some: the bytes before the run must stay, and the run's bytes and
// length must be AppendVarint's.
func TestAppendAmountsMatchesBinary(t *testing.T) {
	const seed = 20261127
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	var vals []money.Amount
	for bitsLen := 0; bitsLen <= 64; bitsLen++ {
		for range 20 {
			v := r.Uint64()
			if bitsLen < 64 {
				v &= 1<<bitsLen - 1
			}
			vals = append(vals, money.Amount(v), -money.Amount(v))
		}
		vals = append(vals, money.Amount(uint64(1)<<bitsLen-1)) // all ones; -1 at 64
	}
	for start := range vals {
		for size := range 10 {
			run := make([]money.Amount, size)
			for k := range run {
				run[k] = vals[(start+k*37)%len(vals)]
			}
			for _, spare := range []int{0, 1, 9, 10 * size, 100} {
				dst := make([]byte, 3, 3+spare)
				copy(dst, "abc")
				want := []byte("abc")
				for _, v := range run {
					want = binary.AppendVarint(want, int64(v))
				}
				if got := appendAmounts(dst, run); !bytes.Equal(got, want) {
					t.Fatalf("appendAmounts(%d bytes spare, %v) = %x, want %x", spare, run, got, want)
				}
			}
		}
	}
}

// TestAppendTimeMatchesBinary compares appendTime with
// binary.AppendVarint: random values of every bit length and both signs,
// the edges of the nine-byte case (a zig-zag of 2^56 and of 2^63, each
// side), the int64 ends and times of this century, after a prefix, with
// no spare capacity and with some.
func TestAppendTimeMatchesBinary(t *testing.T) {
	const seed = 20261127
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	var vals []int64
	for bitsLen := 0; bitsLen <= 64; bitsLen++ {
		for range 50 {
			v := r.Uint64()
			if bitsLen < 64 {
				v &= 1<<bitsLen - 1
			}
			vals = append(vals, int64(v), -int64(v))
		}
		all := uint64(1)<<bitsLen - 1 // all ones; -1 at 64
		vals = append(vals, int64(all), -int64(all), int64(all+1), -int64(all+1))
	}
	for _, edge := range []int64{1 << 55, 1 << 62} { // zig-zag 2^56 and 2^63
		for d := int64(-3); d <= 3; d++ {
			vals = append(vals, edge+d, -edge+d)
		}
	}
	vals = append(vals, math.MaxInt64, math.MinInt64, 0, 1, -1,
		time.Date(2026, 11, 27, 5, 0, 0, 123456789, time.UTC).UnixNano(),
		time.Date(1970, 1, 1, 0, 0, 0, 1, time.UTC).UnixNano(),
		time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	for k := range 1000 {
		vals = append(vals, time.Date(2000+k%260, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()+r.Int64N(int64(365*24*time.Hour)))
	}
	for _, v := range vals {
		for _, spare := range []int{0, 1, 8, 9, 10, 100} {
			dst := make([]byte, 3, 3+spare)
			copy(dst, "abc")
			want := binary.AppendVarint([]byte("abc"), v)
			if got := appendTime(dst, v); !bytes.Equal(got, want) {
				t.Fatalf("appendTime(%d bytes spare, %d) = %x, want %x", spare, v, got, want)
			}
		}
	}
}
