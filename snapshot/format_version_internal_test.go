package snapshot

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/wal/record"
)

// TestDecodeVersion2Snapshot reads a snapshot as the build before format
// version 3 wrote it (magic MKTSNAP2, frames of version 2): a data
// directory of that build still recovers.
func TestDecodeVersion2Snapshot(t *testing.T) {
	im := &core.Record{Kind: core.KindImage, Accounts: []core.AccountChange{{
		ID: uuid.New(), Prev: 3, Info: &core.AccountInfo{Name: "old", PasswordHash: []byte("h"), CreatedAt: 1},
		Balances: []core.Balance{{Currency: money.KP, After: 5}},
	}}}
	frame := record.AppendFrame(nil, core.KindImage, 1, record.Append(nil, im))
	frame[2] = 2 // version 2: this record's encoding is the same in both
	end := len(frame) - record.FrameTrailerBytes
	binary.LittleEndian.PutUint32(frame[end:], crc32.Checksum(frame[:end], castagnoli))

	b := append(magicV2[:], make([]byte, 16)...)
	b = binary.AppendUvarint(b, uint64(len(frame)))
	b = append(b, frame...)
	b = appendTrailer(b, 3, 1, 0)
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], castagnoli))

	var got []*core.Record
	h, err := Decode(b, func(r *core.Record) error {
		got = append(got, r)
		return nil
	})
	if err != nil {
		t.Fatalf("decode a version-2 snapshot: %v", err)
	}
	if h.Through != 3 || len(got) != 1 || got[0].Accounts[0].Info.Name != "old" {
		t.Fatalf("header %+v, records %+v", h, got)
	}
}
