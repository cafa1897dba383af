package core

import (
	"testing"

	"github.com/google/uuid"
)

// TestIDSource: IDs are random version 4 UUIDs of the RFC 9562 variant,
// distinct across buffer refills, and drawing one allocates nothing.
func TestIDSource(t *testing.T) {
	s := newIDSource()
	seen := make(map[uuid.UUID]bool)
	for i := range 3 * idBufferBytes / 16 {
		id := s.next()
		if id.Version() != 4 || id.Variant() != uuid.RFC4122 {
			t.Fatalf("ID %d %s: version %d, variant %s", i, id, id.Version(), id.Variant())
		}
		if seen[id] {
			t.Fatalf("ID %d %s drawn twice", i, id)
		}
		seen[id] = true
	}
	if code := s.code(); len(code) != ReferralCodeLen {
		t.Fatalf("referral code %q", code)
	}
	if n := testing.AllocsPerRun(100, func() { s.next() }); n != 0 {
		t.Fatalf("next allocates %v times", n)
	}
}
