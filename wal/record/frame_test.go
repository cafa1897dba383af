package record

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"marketd/core"

	"marketd/wal/record/recordgen"
)

func TestFrameRoundTrip(t *testing.T) {
	g := recordgen.New(codecSeed + 2)
	for i := range 200 {
		rec := g.Record()
		seq := g.Uint64()
		b := AppendFramed(nil, seq, rec)
		if want := AppendFrame(nil, rec.Kind, seq, Append(nil, rec)); !bytes.Equal(b, want) {
			t.Fatalf("record %d: AppendFramed and AppendFrame differ", i)
		}
		f, err := DecodeFrameAt(b, seq)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if f.Kind != rec.Kind || f.Seq != seq || !bytes.Equal(f.Payload, Append(nil, rec)) {
			t.Fatalf("record %d: frame %+v", i, f)
		}
		if _, err := DecodeFramed(b, seq, new(Block)); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
}

func TestFrameCRCCatchesEveryBitFlip(t *testing.T) {
	b := AppendFramed(nil, 42, recordgen.Trade(42))
	for i := range len(b) * 8 {
		c := bytes.Clone(b)
		c[i/8] ^= 1 << (i % 8)
		if f, err := DecodeFrameAt(c, 42); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("bit %d flipped: got %+v, %v; want ErrCorrupt", i, f, err)
		}
	}
}

func TestDecodeFrameRejects(t *testing.T) {
	valid := AppendFrame(nil, core.KindTrade, 7, []byte("payload"))
	withByte := func(i int, v byte) []byte {
		c := bytes.Clone(valid)
		c[i] = v
		return sealFrame(c[:len(c)-FrameTrailerBytes], 0) // a correct CRC over the change
	}
	tests := []struct {
		name string
		b    []byte
		seq  uint64
		want string
	}{
		{"empty", nil, 7, "0 bytes, minimum 16"},
		{"zero-filled entry", make([]byte, 15), 7, "15 bytes, minimum 16"},
		{"zeros of a full frame", make([]byte, 40), 7, "bad magic"},
		{"bad magic", withByte(0, 0xF8), 7, "bad magic"},
		{"bad version", withByte(2, 9), 7, "unknown version 9"},
		{"crc", append(bytes.Clone(valid[:len(valid)-1]), valid[len(valid)-1]^1), 7, "crc"},
		{"seq", valid, 8, "seq 7 read at 8"},
		{"truncated", valid[:len(valid)-1], 7, "crc"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := DecodeFrameAt(tc.b, tc.seq)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("input %x\ngot %+v, %v\nwant ErrCorrupt containing %q", tc.b, f, err, tc.want)
			}
		})
	}
	// A frame whose kind is not its record's.
	b := AppendFrame(nil, core.KindSplit, 1, Append(nil, recordgen.Trade(1)))
	if _, err := DecodeFramed(b, 1, new(Block)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("kind mismatch: err %v, want ErrCorrupt", err)
	}
}

// TestDecodeVersion2Frame reads a frame of format version 2 holding a
// market's info without the Step version 3 appended: a log written by the
// build before still replays, the Step zero.
func TestDecodeVersion2Frame(t *testing.T) {
	rec := &core.Record{Kind: core.KindMarketCreated, Markets: []core.MarketChange{{
		Info: &core.MarketInfo{Title: "t", Status: core.StatusClosed},
	}}}
	v3 := Append(nil, rec)
	// Version 2 ends the info before the Step's presence byte, which is
	// the info's last byte here: the market's three list counts follow it.
	cut := len(v3) - 1 - 3 - 1 - 2 // supply flag, keys, sessions; lists; step flag
	payload := append(append([]byte{}, v3[:cut]...), v3[cut+1:]...)
	frame := AppendFrame(nil, rec.Kind, 9, payload)
	frame[2] = 2
	end := len(frame) - FrameTrailerBytes
	frame = sealFrame(frame[:end], 0)
	got, err := DecodeFramed(frame, 9, new(Block))
	if err != nil {
		t.Fatalf("decode a version-2 frame: %v", err)
	}
	if in := got.Markets[0].Info; in.Title != "t" || in.Status != core.StatusClosed || in.Step != (core.Step{}) {
		t.Fatalf("decoded info %+v", in)
	}
	if _, err := DecodeFramed(AppendFrame(nil, rec.Kind, 9, payload), 9, new(Block)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("the version-2 payload in a version-3 frame: %v, want ErrCorrupt", err)
	}
}
