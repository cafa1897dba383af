package core

import (
	"crypto/rand"
	"encoding/binary"
	"sync"

	"github.com/google/uuid"
)

// idSource draws random (version 4) UUIDs from crypto/rand through a buffer,
// so that an ID costs a copy instead of a call into crypto/rand on the
// trade path. crypto/rand's Read never returns an error (Go 1.24 and later
// crash the program instead), so neither can the buffer's refill: as
// everywhere in marketd (transport's secrets, the admin's password), its
// error is not checked.
type idSource struct {
	mu  sync.Mutex
	buf [idBufferBytes]byte // guarded by mu; buf[off:] is unused randomness
	off int
}

// idBufferBytes is the randomness drawn at once: 256 IDs.
const idBufferBytes = 4096

func newIDSource() *idSource {
	return &idSource{off: idBufferBytes}
}

// take copies len(dst) unused random bytes into dst, refilling the buffer
// when it runs out. Caller holds s.mu; len(dst) <= idBufferBytes.
func (s *idSource) take(dst []byte) {
	if s.off+len(dst) > len(s.buf) {
		_, _ = rand.Read(s.buf[:]) // fails only by crashing the program
		s.off = 0
	}
	s.off += copy(dst, s.buf[s.off:])
}

// next returns a random (version 4) UUID. It sets the version and variant
// bits as uuid.NewRandomFromReader does (RFC 9562, section 5.4); that
// function cost an allocation per ID, the trade path's second, because the
// UUID it reads into escapes through io.Reader.
func (s *idSource) next() uuid.UUID {
	var id uuid.UUID
	s.mu.Lock()
	s.take(id[:])
	s.mu.Unlock()
	id[6] = id[6]&0x0f | 0x40 // version 4
	id[8] = id[8]&0x3f | 0x80 // RFC 9562 variant
	return id
}

// referralAlphabet has 32 symbols, none of them easy to misread (no 0, O,
// 1, I), so a code of 8 carries 40 random bits.
const referralAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

// code returns a random referral code of ReferralCodeLen symbols.
func (s *idSource) code() string {
	var b [ReferralCodeLen]byte
	s.mu.Lock()
	s.take(b[:])
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
