package core_test

import (
	"math/rand/v2"
	"testing"

	"marketd/core"
	"marketd/wal/record"
	"marketd/wal/record/recordgen"
)

// TestMaxEncodedBytesBoundsTheCodec holds core's bound of a record's size
// above the codec's encoding, on generated records covering every field.
func TestMaxEncodedBytesBoundsTheCodec(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	g := recordgen.New(seed)
	for i := range 2000 {
		rec := g.Record()
		got, bound := len(record.Append(nil, rec)), core.MaxEncodedBytes(rec)
		if bound < got {
			t.Fatalf("record %d (kind %d): bound %d below the encoding's %d bytes", i, rec.Kind, bound, got)
		}
	}
}
