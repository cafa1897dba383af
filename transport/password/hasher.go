package password

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"

	"golang.org/x/crypto/bcrypt"
)

// ErrBusy is returned when as many calls are hashing and waiting as the
// Hasher allows. The caller answers 503 with Retry-After: the pool drains
// in a few hash times, so a second or two is enough.
var ErrBusy = errors.New("password: hasher busy")

// prehashBytes is the length of a pre-hashed password: a SHA-256 digest in
// base64, within bcrypt's 72-byte input limit.
const prehashBytes = 44

// Hasher hashes and compares passwords with bcrypt, at most workers at once
// with at most queue more waiting. It is safe for concurrent use.
//
// The hashing runs on the caller's goroutine once it holds one of the
// workers slots, rather than on worker goroutines fed by a channel. The
// bound on simultaneous bcrypt runs is what leaves cores to trading, and
// semaphores give it without goroutines to start, own and stop (so there is
// no Close) and without a handoff each way; the caller has to wait for its
// result either way.
type Hasher struct {
	cost int
	// admitted holds a token for each call hashing or waiting to; its
	// capacity, workers+queue, is the admission bound. Taken without
	// blocking: full means ErrBusy.
	admitted chan struct{}
	// reserved is admission kept for trusted calls (logins with a device
	// cookie, CompareTrusted): when admitted is full, they may take one of
	// its tokens instead, so that a flood of other logins cannot keep an
	// owner from logging in. Capacity 0 when none is kept.
	reserved chan struct{}
	// working holds a token for each call hashing; its capacity is workers.
	// Taken while ctx allows, by calls already admitted.
	working chan struct{}
	// dummy is a hash at cost of a random secret that no password matches,
	// compared when the account is unknown.
	dummy []byte

	// generate and compare are bcrypt's, replaced in tests to hold a call
	// inside a slot or to see what it compares.
	generate func(password []byte, cost int) ([]byte, error)
	compare  func(hash, password []byte) error
}

// NewHasher returns a Hasher that runs at most workers bcrypt hashes at once
// and lets at most queue more calls wait, with the given bcrypt cost
// (production: 10, 85 ms a hash by BenchmarkHash on the 2-core development
// machine; tests may use bcrypt.MinCost). It computes the dummy hash for unknown accounts, one
// hash's time.
func NewHasher(workers, queue, cost int) *Hasher {
	return NewHasherReserve(workers, queue, 0, cost)
}

// NewHasherReserve is NewHasher with reserved more calls admitted for
// CompareTrusted alone, once workers+queue are taken by other calls.
func NewHasherReserve(workers, queue, reserved, cost int) *Hasher {
	if workers < 1 || queue < 0 || reserved < 0 || cost < bcrypt.MinCost || cost > bcrypt.MaxCost {
		panic(fmt.Sprintf("BUG: password: NewHasher(workers %d, queue %d, reserved %d, cost %d)", workers, queue, reserved, cost))
	}
	secret := prehash(rand.Text())
	dummy, err := bcrypt.GenerateFromPassword(secret[:], cost)
	if err != nil {
		// Only a cost out of range or an input over 72 bytes fail, both
		// excluded above.
		panic(fmt.Sprintf("BUG: password: dummy hash at cost %d: %v", cost, err))
	}
	return &Hasher{
		cost:     cost,
		admitted: make(chan struct{}, workers+queue),
		reserved: make(chan struct{}, reserved),
		working:  make(chan struct{}, workers),
		dummy:    dummy,
		generate: bcrypt.GenerateFromPassword,
		compare:  bcrypt.CompareHashAndPassword,
	}
}

// prehash returns the bytes given to bcrypt for a password: the base64 of
// its SHA-256 digest. bcrypt refuses inputs over 72 bytes (other
// implementations silently cut them there), and our passwords run to 128
// characters, up to 512 bytes of UTF-8; the digest keeps every byte of the
// password significant. Base64 rather than the raw digest because the raw
// digest may hold NUL bytes, at which C implementations of bcrypt stop
// reading, and the stored hashes should verify anywhere.
func prehash(password string) [prehashBytes]byte {
	digest := sha256.Sum256([]byte(password))
	var out [prehashBytes]byte
	base64.StdEncoding.Encode(out[:], digest[:])
	return out
}

// Hash returns the bcrypt hash of password, to be stored for the account.
// It returns ErrBusy at once if the Hasher is full, and the context's error
// if ctx is done before a worker slot frees up.
func (h *Hasher) Hash(ctx context.Context, password string) ([]byte, error) {
	if err := h.acquire(ctx); err != nil {
		return nil, err
	}
	defer h.release()
	p := prehash(password)
	hash, err := h.generate(p[:], h.cost)
	if err != nil {
		return nil, fmt.Errorf("password: bcrypt hash: %w", err)
	}
	return hash, nil
}

// Compare reports whether password matches hash, as made by Hash. An empty
// hash stands for an unknown account: password is then compared against
// the dummy hash, so that the answer (false) takes as long as a wrong
// password does and timing does not tell which names exist. A malformed
// hash is an error. ErrBusy and the context's error are returned as by
// Hash.
func (h *Hasher) Compare(ctx context.Context, hash []byte, password string) (bool, error) {
	return h.compareAdmitted(ctx, hash, password, false)
}

// CompareTrusted is Compare for a caller the server trusts more than
// others (a login with a valid device cookie for the account): when the
// ordinary admission is full it may use the reserved one, so that a flood
// of other logins does not refuse it.
func (h *Hasher) CompareTrusted(ctx context.Context, hash []byte, password string) (bool, error) {
	return h.compareAdmitted(ctx, hash, password, true)
}

func (h *Hasher) compareAdmitted(ctx context.Context, hash []byte, password string, trusted bool) (bool, error) {
	known := len(hash) > 0
	if !known {
		hash = h.dummy
	}
	release, err := h.admit(ctx, trusted)
	if err != nil {
		return false, err
	}
	p := prehash(password)
	err = h.compare(hash, p[:])
	release()
	switch {
	case !known:
		return false, nil
	case err == nil:
		return true, nil
	case errors.Is(err, bcrypt.ErrMismatchedHashAndPassword):
		return false, nil
	default:
		return false, fmt.Errorf("password: bcrypt compare: %w", err)
	}
}

// acquire admits a call and waits for a worker slot. On success the caller
// must call release.
func (h *Hasher) acquire(ctx context.Context) error {
	_, err := h.admit(ctx, false)
	return err
}

// admit admits a call, from the reserved admission too when trusted and
// the ordinary one is full, and waits for a worker slot. On success the
// caller must call the returned release.
func (h *Hasher) admit(ctx context.Context, trusted bool) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("password: before hashing: %w", err)
	}
	adm := h.admitted
	select {
	case adm <- struct{}{}:
	default:
		if !trusted {
			return nil, ErrBusy
		}
		adm = h.reserved
		select {
		case adm <- struct{}{}:
		default:
			return nil, ErrBusy
		}
	}
	select {
	case h.working <- struct{}{}:
		if adm == h.reserved {
			return h.releaseReserved, nil
		}
		return h.release, nil
	case <-ctx.Done():
		<-adm
		return nil, fmt.Errorf("password: waiting for a worker: %w", ctx.Err())
	}
}

// release frees the slots taken by acquire.
func (h *Hasher) release() {
	<-h.working
	<-h.admitted
}

// releaseReserved frees the slots of a call admitted on the reserve.
func (h *Hasher) releaseReserved() {
	<-h.working
	<-h.reserved
}
