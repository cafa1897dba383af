package core

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"io"
	"sync"

	"github.com/google/uuid"
)

// idSource draws random (version 4) UUIDs from crypto/rand through a buffer,
// so that an ID costs a copy instead of a system call on the trade path.
// crypto/rand's Read never returns an error (Go 1.24 and later crash the
// program instead), so neither can the buffer's reads: as everywhere in
// marketd (transport's secrets, the admin's password), its error is not
// checked.
type idSource struct {
	mu sync.Mutex
	r  *bufio.Reader // guarded by mu
}

func newIDSource() *idSource {
	return &idSource{r: bufio.NewReaderSize(rand.Reader, 4096)}
}

func (s *idSource) next() uuid.UUID {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, _ := uuid.NewRandomFromReader(s.r) // fails only if crypto/rand does
	return id
}

// referralAlphabet has 32 symbols, none of them easy to misread (no 0, O,
// 1, I), so a code of 8 carries 40 random bits.
const referralAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

// code returns a random referral code of ReferralCodeLen symbols.
func (s *idSource) code() string {
	var b [ReferralCodeLen]byte
	s.mu.Lock()
	_, _ = io.ReadFull(s.r, b[:]) // fails only if crypto/rand does
	s.mu.Unlock()
	for i := range b {
		b[i] = referralAlphabet[b[i]%byte(len(referralAlphabet))]
	}
	return string(b[:])
}

// LedgerEntryID derives a ledger entry's ID from the record that made it and
// the entry's index in that record: a version 8 UUID holding both numbers.
// Deriving it keeps 16 random bytes per entry out of the log while the ID
// stays unique and stable across replays.
func LedgerEntryID(seq uint64, index uint32) uuid.UUID {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], seq)
	var id uuid.UUID
	copy(id[0:6], b[0:6])
	id[6] = 0x80 // version 8, in the high nibble
	id[7] = b[6]
	id[8] = 0x80 // RFC 9562 variant, in the high bits
	id[9] = b[7]
	// The low half first, where a 16-bit index used to be alone.
	binary.BigEndian.PutUint16(id[10:12], uint16(index))
	binary.BigEndian.PutUint16(id[12:14], uint16(index>>16))
	return id
}

// HouseID is the account of the platform's equity: it funds market
// subsidies, takes back what settled markets leave, and may go negative.
var HouseID = uuid.UUID{15: 1}
