package record

import (
	"reflect"
	"strings"
	"testing"

	"marketd/core"
	"marketd/wal/record/recordgen"
)

// TestDecodeFramedStrings decodes many random records with their strings
// in one Strings, keeps every record, and only then compares each with the
// record it encodes: a string copied into a shared block must not change
// when later records' strings are copied after it, nor when the frames
// they were decoded from are overwritten.
func TestDecodeFramedStrings(t *testing.T) {
	t.Logf("seed %d", codecSeed)
	g := recordgen.New(codecSeed)
	var strs Strings
	var want, got []*core.Record
	var frame []byte
	for i := range 2000 {
		rec := g.Record()
		if i%7 == 0 && len(rec.Accounts) > 0 && rec.Accounts[0].Info != nil {
			// A string larger than a quarter block gets memory of its own.
			rec.Accounts[0].Info.Persona = strings.Repeat("p", stringsChunkBytes/2)
		}
		frame = AppendFramed(frame[:0], uint64(i+1), rec)
		var blk Block
		dec, err := DecodeFramedStrings(frame, uint64(i+1), &blk, &strs)
		if err != nil {
			t.Fatalf("record %d (seed %d): %v", i, codecSeed, err)
		}
		clear(frame)
		want, got = append(want, rec), append(got, dec)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("record %d (seed %d): differs after later decodes\ngot:  %+v\nwant: %+v", i, codecSeed, got[i], want[i])
		}
	}
}
