package wal

import (
	"bytes"
	"testing"
)

// FuzzDecodeRecord checks that DecodeRecord never panics and that whatever
// it accepts re-encodes to the same bytes (the encoding is canonical).
func FuzzDecodeRecord(f *testing.F) {
	g := newGen(codecSeed + 3)
	for range 32 {
		f.Add(AppendRecord(nil, g.record()))
	}
	f.Add(AppendRecord(nil, tradeRecord(1)))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := DecodeRecord(b)
		if err != nil {
			return
		}
		if got := AppendRecord(nil, rec); !bytes.Equal(got, b) {
			t.Fatalf("accepted %x\nre-encoded as %x", b, got)
		}
	})
}

// FuzzDecodeFrame checks that DecodeFrame never panics and that whatever it
// accepts re-frames to the same bytes; when the payload is also a record,
// that it decodes as the log would.
func FuzzDecodeFrame(f *testing.F) {
	g := newGen(codecSeed + 4)
	for i := range 16 {
		f.Add(AppendRecordFrame(nil, uint64(i+1), g.record()))
	}
	f.Add(AppendRecordFrame(nil, 1<<40, tradeRecord(1)))
	f.Add(make([]byte, MinFrameBytes))
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := DecodeFrame(b)
		if err != nil {
			return
		}
		if got := AppendFrame(nil, fr.Kind, fr.Seq, fr.Payload); !bytes.Equal(got, b) {
			t.Fatalf("accepted %x\nre-framed as %x", b, got)
		}
		if rec, err := decodeRecordFrame(b, fr.Seq, new(recordBlock)); err == nil {
			if got := AppendRecordFrame(nil, fr.Seq, rec); !bytes.Equal(got, b) {
				t.Fatalf("accepted record frame %x\nre-encoded as %x", b, got)
			}
		}
	})
}
