package core

import (
	"cmp"
	"crypto/rand"
	"encoding/binary"
	"sync"

	"github.com/google/uuid"
)

// idBuffer is randomness drawn from crypto/rand ahead of its use, so that
// an ID costs a copy instead of a call into crypto/rand. crypto/rand's Read
// never returns an error (Go 1.24 and later crash the program instead), so
// neither can the buffer's refill: as everywhere in marketd (transport's
// secrets, the admin's password), its error is not checked. The zero value
// is empty and draws on first use. It is not safe for concurrent use:
// idSource guards one with a mutex, and each market goroutine owns one
// (scratch.ids), so that a trade draws its ID without taking a lock that
// every market's goroutine shares.
type idBuffer struct {
	buf  []byte // made on first use: most markets' goroutines never draw
	left int    // buf[len(buf)-left:] is unused randomness
	size int    // len(buf) once made; 0 means idBufferBytes
}

// idBufferBytes is the randomness idSource draws at once: 256 IDs.
// marketIDBufferBytes is a market goroutine's (64 IDs), smaller since
// every market that trades keeps one.
const (
	idBufferBytes       = 4096
	marketIDBufferBytes = 1024
)

// take copies len(dst) unused random bytes into dst, refilling the buffer
// when it runs out; len(dst) is at most the buffer's size.
func (b *idBuffer) take(dst []byte) {
	if len(dst) > b.left {
		b.refill()
	}
	copy(dst, b.buf[len(b.buf)-b.left:])
	b.left -= len(dst)
}

// refill draws the whole buffer anew.
func (b *idBuffer) refill() {
	if b.buf == nil {
		b.buf = make([]byte, cmp.Or(b.size, idBufferBytes))
	}
	_, _ = rand.Read(b.buf) // fails only by crashing the program
	b.left = len(b.buf)
}

// next returns a random (version 4) UUID. It sets the version and variant
// bits as uuid.NewRandomFromReader does (RFC 9562, section 5.4); that
// function cost an allocation per ID, the trade path's second, because the
// UUID it reads into escapes through io.Reader. The 16 bytes are taken as
// an array conversion rather than through take, whose copy of a slice of
// any length was a call to memmove, about 40 instructions of a trade
// (docs/PERFORMANCE.md, "The trade's own instructions").
func (b *idBuffer) next() uuid.UUID {
	if b.left < len(uuid.UUID{}) {
		b.refill()
	}
	i := len(b.buf) - b.left
	id := uuid.UUID(b.buf[i : i+len(uuid.UUID{})])
	b.left -= len(id)
	id[6] = id[6]&0x0f | 0x40 // version 4
	id[8] = id[8]&0x3f | 0x80 // RFC 9562 variant
	return id
}

// idSource is an idBuffer shared by every goroutine of the engine, for the
// IDs drawn outside a market's goroutine (accounts, markets, keys,
// transfers, proposals) and for referral codes.
type idSource struct {
	mu sync.Mutex
	b  idBuffer // guarded by mu
}

func newIDSource() *idSource {
	return &idSource{}
}

// next returns a random (version 4) UUID (idBuffer.next).
func (s *idSource) next() uuid.UUID {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.next()
}

// referralAlphabet has 32 symbols, none of them easy to misread (no 0, O,
// 1, I), so a code of 8 carries 40 random bits.
const referralAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

// code returns a random referral code of ReferralCodeLen symbols.
func (s *idSource) code() string {
	var b [ReferralCodeLen]byte
	s.mu.Lock()
	s.b.take(b[:])
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
