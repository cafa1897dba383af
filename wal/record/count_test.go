package record

import (
	"errors"
	"testing"

	"marketd/wal/record/recordgen"
)

// TestCountAccounts: the count read from a record's head is the number of
// account changes the record decodes to, in both readable formats; a bad
// head is an error wrapping ErrCorrupt.
func TestCountAccounts(t *testing.T) {
	t.Logf("seed %d", codecSeed)
	g := recordgen.New(codecSeed)
	for i := range 1000 {
		rec := g.Record()
		n, err := CountAccounts(FormatVersion, Append(nil, rec))
		if err != nil || n != len(rec.Accounts) {
			t.Fatalf("record %d (seed %d): %d accounts, %v; want %d", i, codecSeed, n, err, len(rec.Accounts))
		}
	}
	rec := recordgen.Trade(1)
	good := Append(nil, rec)
	tests := []struct {
		name    string
		version byte
		b       []byte
	}{
		{"empty", FormatVersion, nil},
		{"unknown version", FormatVersion + 1, good},
		{"version too old", MinFormatVersion - 1, good},
		{"unknown kind", FormatVersion, append([]byte{255}, good[1:]...)},
		{"truncated count", FormatVersion, good[:2]},
		{"count past the end", FormatVersion, append(append([]byte{}, good[:2]...), 0x7f)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if n, err := CountAccounts(tc.version, tc.b); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("CountAccounts(%d, %x) = %d, %v; want an error wrapping ErrCorrupt", tc.version, tc.b, n, err)
			}
		})
	}
}
