package core

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestCheckFindsDriftedLookups(t *testing.T) {
	tests := []struct {
		name  string
		drift func(x *indexes)
	}{
		{"code", func(x *indexes) { x.codes[codeKey([]byte("ABCDEFGH"))] = uuid.New() }},
		{"wallet", func(x *indexes) { x.wallets["0xabc"] = uuid.New() }},
		{"deposit", func(x *indexes) { x.txs["0x1"] = txRef{uuid.New(), uuid.New()} }},
		{"referee", func(x *indexes) { x.referees[uuid.New()] = []uuid.UUID{uuid.New()} }},
		{"created market", func(x *indexes) { x.created[uuid.New()] = []uuid.UUID{uuid.New()} }},
		{"proposal", func(x *indexes) { x.proposals[uuid.New()] = uuid.New() }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewState()
			if err := s.Check(); err != nil {
				t.Fatalf("fresh state: %v", err)
			}
			tc.drift(&s.idx)
			if err := s.Check(); err == nil || !strings.Contains(err.Error(), "lookups") {
				t.Fatalf("Check = %v, want a lookup violation", err)
			}
		})
	}
}
