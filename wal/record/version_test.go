package record

import (
	"encoding/gob"
	"os"
	"reflect"
	"testing"

	"marketd/core"
)

// v2Books sets what a format-2 book decodes to in format 3's fields: its
// market_seq starts at its trade count, since only trades moved q.
func v2Books(rec *core.Record) {
	for i := range rec.Markets {
		for j := range rec.Markets[i].Books {
			b := &rec.Markets[i].Books[j]
			b.Seq = b.Trades
		}
	}
}

// TestDecodeVersion2 decodes frames written by the format-2 encoder (the
// commit before format 3, through recordgen seed 2) and compares them with
// the records they were made from: a log or a snapshot of format 2 reads
// as records without the fields format 3 added.
func TestDecodeVersion2(t *testing.T) {
	f, err := os.Open("testdata/v2_frames.gob")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var golden struct {
		Frames  [][]byte
		Records []*core.Record
	}
	if err := gob.NewDecoder(f).Decode(&golden); err != nil {
		t.Fatal(err)
	}
	if len(golden.Frames) == 0 || len(golden.Frames) != len(golden.Records) {
		t.Fatalf("%d frames, %d records", len(golden.Frames), len(golden.Records))
	}
	for i, b := range golden.Frames {
		if b[2] != 2 {
			t.Fatalf("frame %d has version %d, want 2", i, b[2])
		}
		got, err := DecodeFramed(b, uint64(i+1), new(Block))
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		want := golden.Records[i]
		v2Books(want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("frame %d decodes to\n%+v\nwant\n%+v", i, got, want)
		}
	}
}
