package core

import (
	"testing"

	"github.com/google/uuid"
)

// A live operation's key image never takes back usage already counted;
// replay and snapshot images set it, as the log's truth.
func TestKeyImageUsage(t *testing.T) {
	cases := []struct {
		name         string
		replay       bool
		imageCount   uint64
		imageUsed    int64
		wantCount    uint64
		wantLastUsed int64
	}{
		{"live, image behind", false, 5, 50, 10, 100},
		{"live, image ahead", false, 12, 120, 12, 120},
		{"replay, image behind", true, 5, 50, 5, 50},
		{"replay, image ahead", true, 12, 120, 12, 120},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var tab authTable
			tab.init()
			k := Key{ID: uuid.New(), Account: uuid.New(), Hash: [32]byte{1}, TotalRequests: 10, LastUsedAt: 100}
			tab.putKey(1, k)
			k.TotalRequests, k.LastUsedAt = tc.imageCount, tc.imageUsed
			if tc.replay {
				tab.putKey(2, k)
			} else {
				tab.applyKey(2, k)
			}
			ent := tab.keys[k.ID]
			got := ent.current()
			if got.TotalRequests != tc.wantCount || got.LastUsedAt != tc.wantLastUsed {
				t.Fatalf("image %d@%d over 10@100: %d@%d, want %d@%d", tc.imageCount, tc.imageUsed,
					got.TotalRequests, got.LastUsedAt, tc.wantCount, tc.wantLastUsed)
			}
			if want := got != ent.key; ent.unlogged() != want {
				t.Fatalf("unlogged = %v, want %v", ent.unlogged(), want)
			}
		})
	}
}
