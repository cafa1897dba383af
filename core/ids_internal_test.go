package core

import (
	"testing"

	"github.com/google/uuid"
)

// TestIDSource: IDs are random version 4 UUIDs of the RFC 9562 variant,
// distinct across buffer refills, and drawing one allocates nothing, from
// the engine's shared source and from a market goroutine's own buffer.
func TestIDSource(t *testing.T) {
	s := newIDSource()
	own := &idBuffer{size: marketIDBufferBytes}
	for _, c := range []struct {
		name  string
		bytes int
		next  func() uuid.UUID
	}{
		{"shared", idBufferBytes, s.next},
		{"market", marketIDBufferBytes, own.next},
		{"zero value", idBufferBytes, new(idBuffer).next},
	} {
		t.Run(c.name, func(t *testing.T) {
			seen := make(map[uuid.UUID]bool)
			for i := range 3 * c.bytes / 16 {
				id := c.next()
				if id.Version() != 4 || id.Variant() != uuid.RFC4122 {
					t.Fatalf("ID %d %s: version %d, variant %s", i, id, id.Version(), id.Variant())
				}
				if seen[id] {
					t.Fatalf("ID %d %s drawn twice", i, id)
				}
				seen[id] = true
			}
			if n := testing.AllocsPerRun(100, func() { c.next() }); n != 0 {
				t.Fatalf("next allocates %v times", n)
			}
		})
	}
	if code := s.code(); len(code) != ReferralCodeLen {
		t.Fatalf("referral code %q", code)
	}
}
