package record

import (
	"testing"

	"marketd/wal/record/recordgen"
)

func BenchmarkEncode(b *testing.B) {
	rec := recordgen.Trade(123456)
	buf := AppendFramed(nil, 123456, rec)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendFramed(buf[:0], 123456, rec)
	}
}

func BenchmarkDecode(b *testing.B) {
	frame := AppendFramed(nil, 123456, recordgen.Trade(123456))
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeFramed(frame, 123456, new(Block)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeReused decodes into one Block cleared each time, as
// replay's workers do.
func BenchmarkDecodeReused(b *testing.B) {
	frame := AppendFramed(nil, 123456, recordgen.Trade(123456))
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	var blk Block
	for b.Loop() {
		blk = Block{}
		if _, err := DecodeFramed(frame, 123456, &blk); err != nil {
			b.Fatal(err)
		}
	}
}
