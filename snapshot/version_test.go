package snapshot

import (
	"encoding/binary"
	"encoding/gob"
	"errors"
	"hash/crc32"
	"os"
	"reflect"
	"strings"
	"testing"

	"marketd/core"
)

// TestDecodeVersion2 reads a snapshot of format 2 (MKTSNAP2, chunks of
// record format 2; written by the commit before format 3 from recordgen
// seed 3) and compares its images with the records it was made from.
func TestDecodeVersion2(t *testing.T) {
	b, err := os.ReadFile("testdata/v2.snap")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("testdata/v2.snap.gob")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []*core.Record
	if err := gob.NewDecoder(f).Decode(&want); err != nil {
		t.Fatal(err)
	}
	var got []*core.Record
	h, err := Decode(b, func(rec *core.Record) error {
		got = append(got, rec)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if h.From != 7 || h.Through != 99 || h.Chunks != uint64(len(want)) {
		t.Errorf("header %+v, want From 7, Through 99, Chunks %d", h, len(want))
	}
	for _, rec := range want {
		// A format-2 book's market_seq starts at its trade count.
		for i := range rec.Markets {
			for j := range rec.Markets[i].Books {
				rec.Markets[i].Books[j].Seq = rec.Markets[i].Books[j].Trades
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("images differ:\ngot  %+v\nwant %+v", got, want)
	}

	// A format-2 snapshot holding a chunk of another format is damaged.
	bad := append([]byte(nil), b...)
	copy(bad, magic[:])
	binary.LittleEndian.PutUint32(bad[len(bad)-4:], crc32.Checksum(bad[:len(bad)-4], castagnoli))
	_, err = Decode(bad, func(*core.Record) error { return nil })
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "record format 2 in a snapshot of format 3") {
		t.Errorf("a MKTSNAP3 header over format-2 chunks: %v, want the format mismatch", err)
	}
}
