package record

import (
	"bytes"
	"reflect"
	"testing"

	"marketd/wal/record/recordgen"
)

// FuzzDecodeRecord checks that Decode never panics and that whatever
// it accepts re-encodes to the same bytes (the encoding is canonical); and
// that DecodeArena, into an Arena a record of several accounts used
// before, accepts the same and decodes it the same.
func FuzzDecodeRecord(f *testing.F) {
	g := recordgen.New(codecSeed + 3)
	for range 32 {
		f.Add(Append(nil, g.Record()))
	}
	f.Add(Append(nil, recordgen.Trade(1)))
	before := Append(nil, manyAccounts(5))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := Decode(b)
		var ar Arena
		if _, err := DecodeArena(&ar, FormatVersion, before); err != nil {
			t.Fatal(err)
		}
		inArena, arenaErr := DecodeArena(&ar, FormatVersion, b)
		if (err == nil) != (arenaErr == nil) {
			t.Fatalf("%x: Decode: %v; DecodeArena: %v", b, err, arenaErr)
		}
		if err != nil {
			return
		}
		if !reflect.DeepEqual(inArena, rec) {
			t.Fatalf("%x: DecodeArena gave %+v\nDecode %+v", b, inArena, rec)
		}
		if got := Append(nil, rec); !bytes.Equal(got, b) {
			t.Fatalf("accepted %x\nre-encoded as %x", b, got)
		}
	})
}

// FuzzDecodeFrame checks that DecodeFrame never panics and that whatever it
// accepts re-frames to the same bytes; when the payload is also a record,
// that it decodes as the log would.
func FuzzDecodeFrame(f *testing.F) {
	g := recordgen.New(codecSeed + 4)
	for i := range 16 {
		f.Add(AppendFramed(nil, uint64(i+1), g.Record()))
	}
	f.Add(AppendFramed(nil, 1<<40, recordgen.Trade(1)))
	f.Add(make([]byte, MinFrameBytes))
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := DecodeFrame(b)
		if err != nil {
			return
		}
		if got := AppendFrame(nil, fr.Kind, fr.Seq, fr.Payload); !bytes.Equal(got, b) {
			t.Fatalf("accepted %x\nre-framed as %x", b, got)
		}
		if rec, err := DecodeFramed(b, fr.Seq, new(Block)); err == nil {
			if got := AppendFramed(nil, fr.Seq, rec); !bytes.Equal(got, b) {
				t.Fatalf("accepted record frame %x\nre-encoded as %x", b, got)
			}
		}
	})
}
