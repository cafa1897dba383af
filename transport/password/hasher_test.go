package password

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

func TestHashCompare(t *testing.T) {
	h := NewHasher(2, 4, bcrypt.MinCost)
	ctx := context.Background()
	max128 := strings.Repeat("€", 128) // 128 characters, 384 bytes
	head72 := strings.Repeat("a", 72)  // bcrypt alone would see only these
	tests := []struct {
		name     string
		password string
		attempt  string
		want     bool
	}{
		{"right password", "correct horse", "correct horse", true},
		{"wrong password", "correct horse", "correct horsf", false},
		{"case matters", "Correct horse", "correct horse", false},
		{"empty attempt", "correct horse", "", false},
		{"128 characters", max128, max128, true},
		{"differs past 72 bytes", head72 + "b", head72 + "c", false},
		{"prefix of a long password", head72 + "b", head72, false},
		{"NUL in the middle", "ab\x00cd", "ab\x00ce", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hash, err := h.Hash(ctx, tt.password)
			if err != nil {
				t.Fatalf("Hash(%q): %v", tt.password, err)
			}
			if cost, err := bcrypt.Cost(hash); err != nil || cost != bcrypt.MinCost {
				t.Fatalf("Hash(%q) = %q: cost %d, %v; want a bcrypt hash of cost %d", tt.password, hash, cost, err, bcrypt.MinCost)
			}
			got, err := h.Compare(ctx, hash, tt.attempt)
			if err != nil || got != tt.want {
				t.Errorf("Compare(Hash(%q), %q) = %v, %v; want %v, nil", tt.password, tt.attempt, got, err, tt.want)
			}
		})
	}
}

func TestHashSalted(t *testing.T) {
	h := NewHasher(1, 0, bcrypt.MinCost)
	a, errA := h.Hash(context.Background(), "same password")
	b, errB := h.Hash(context.Background(), "same password")
	if errA != nil || errB != nil {
		t.Fatalf("Hash: %v, %v", errA, errB)
	}
	if bytes.Equal(a, b) {
		t.Errorf("two hashes of one password are equal (%q): want different salts", a)
	}
}

// TestCompareUnknownAccount checks that an empty hash answers false after
// a bcrypt compare against the dummy hash, at the Hasher's cost: the same
// work as a wrong password.
func TestCompareUnknownAccount(t *testing.T) {
	for _, hash := range [][]byte{nil, {}} {
		t.Run(fmt.Sprintf("hash %#v", hash), func(t *testing.T) {
			h := NewHasher(1, 0, bcrypt.MinCost+1)
			if cost, err := bcrypt.Cost(h.dummy); err != nil || cost != bcrypt.MinCost+1 {
				t.Fatalf("dummy hash %q: cost %d, %v; want %d", h.dummy, cost, err, bcrypt.MinCost+1)
			}
			var compared [][]byte
			h.compare = func(hash, password []byte) error {
				compared = append(compared, hash)
				return bcrypt.CompareHashAndPassword(hash, password)
			}
			ok, err := h.Compare(context.Background(), hash, "guess")
			if ok || err != nil {
				t.Errorf("Compare(%#v, guess) = %v, %v; want false, nil", hash, ok, err)
			}
			if len(compared) != 1 || !bytes.Equal(compared[0], h.dummy) {
				t.Errorf("Compare(%#v, guess) compared against %q, want one compare with the dummy %q", hash, compared, h.dummy)
			}
		})
	}
}

func TestCompareMalformedHash(t *testing.T) {
	h := NewHasher(1, 0, bcrypt.MinCost)
	for _, hash := range []string{"x", "$2a$04$tooshort", strings.Repeat("$", 60)} {
		t.Run(hash, func(t *testing.T) {
			ok, err := h.Compare(context.Background(), []byte(hash), "guess")
			if ok || err == nil || errors.Is(err, ErrBusy) {
				t.Errorf("Compare(%q, guess) = %v, %v; want false and a bcrypt error", hash, ok, err)
			}
		})
	}
}

// holdHashes makes every hash of h wait inside its worker slot until the
// returned release is closed; started receives once per hash that began.
func holdHashes(h *Hasher) (started <-chan struct{}, release chan<- struct{}) {
	s, r := make(chan struct{}, 64), make(chan struct{})
	generate := h.generate
	h.generate = func(password []byte, cost int) ([]byte, error) {
		s <- struct{}{}
		<-r
		return generate(password, cost)
	}
	return s, r
}

// waitAdmitted yields until n calls hold an admission slot of h: the only
// sign that a call is waiting for a worker. No sleep: it polls.
func waitAdmitted(h *Hasher, n int) {
	for len(h.admitted) != n {
		runtime.Gosched()
	}
}

func TestBusy(t *testing.T) {
	const workers, queue = 2, 3
	h := NewHasher(workers, queue, bcrypt.MinCost)
	started, release := holdHashes(h)
	errs := make(chan error, workers+queue)
	for range workers + queue {
		go func() {
			_, err := h.Hash(context.Background(), "password")
			errs <- err
		}()
	}
	for range workers {
		<-started
	}
	waitAdmitted(h, workers+queue)

	for _, call := range []struct {
		name string
		do   func() error
	}{
		{"Hash", func() error { _, err := h.Hash(context.Background(), "password"); return err }},
		{"Compare", func() error { _, err := h.Compare(context.Background(), nil, "password"); return err }},
	} {
		if err := call.do(); !errors.Is(err, ErrBusy) {
			t.Errorf("%s with %d hashing and %d waiting: %v, want ErrBusy", call.name, workers, queue, err)
		}
	}

	close(release)
	for range workers + queue {
		if err := <-errs; err != nil {
			t.Errorf("admitted Hash: %v", err)
		}
	}
	if _, err := h.Hash(context.Background(), "password"); err != nil {
		t.Errorf("Hash after the pool drained: %v", err)
	}
}

func TestContextWhileQueued(t *testing.T) {
	h := NewHasher(1, 1, bcrypt.MinCost)
	started, release := holdHashes(h)
	holder := make(chan error, 1)
	go func() {
		_, err := h.Hash(context.Background(), "password")
		holder <- err
	}()
	<-started

	ctx, cancel := context.WithCancel(context.Background())
	queued := make(chan error, 1)
	go func() {
		_, err := h.Hash(ctx, "password")
		queued <- err
	}()
	waitAdmitted(h, 2)
	cancel()
	if err := <-queued; !errors.Is(err, context.Canceled) {
		t.Errorf("Hash queued when its context was canceled: %v, want context.Canceled", err)
	}
	if n := len(h.admitted); n != 1 {
		t.Errorf("%d admitted after the canceled call left, want 1 (the holder)", n)
	}

	// The canceled call's place in the queue is free again.
	next := make(chan error, 1)
	go func() {
		_, err := h.Compare(context.Background(), nil, "password")
		next <- err
	}()
	waitAdmitted(h, 2)
	close(release)
	if err := <-holder; err != nil {
		t.Errorf("holder: %v", err)
	}
	if err := <-next; err != nil {
		t.Errorf("call queued after the cancel: %v", err)
	}
}

func TestContextDoneBeforeAdmission(t *testing.T) {
	h := NewHasher(1, 0, bcrypt.MinCost)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Hash(ctx, "password"); !errors.Is(err, context.Canceled) {
		t.Errorf("Hash with a canceled context: %v, want context.Canceled", err)
	}
	if ok, err := h.Compare(ctx, nil, "password"); ok || !errors.Is(err, context.Canceled) {
		t.Errorf("Compare with a canceled context: %v, %v; want false, context.Canceled", ok, err)
	}
	if n := len(h.admitted); n != 0 {
		t.Errorf("%d admitted after refused calls, want 0", n)
	}
}

// BenchmarkHash reports the time of one hash at the production cost; the
// compares show that an unknown account costs what a wrong password does.
func BenchmarkHash(b *testing.B) {
	const cost = 10
	h := NewHasher(1, 0, cost)
	ctx := context.Background()
	stored, err := h.Hash(ctx, "correct horse battery")
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, f func() error) {
		b.ReportAllocs()
		for b.Loop() {
			if err := f(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed())/float64(time.Millisecond)/float64(b.N), "ms/hash")
	}
	b.Run("hash/cost=10", func(b *testing.B) {
		run(b, func() error { _, err := h.Hash(ctx, "correct horse battery"); return err })
	})
	b.Run("compare-wrong/cost=10", func(b *testing.B) {
		run(b, func() error { _, err := h.Compare(ctx, stored, "wrong horse battery"); return err })
	})
	b.Run("compare-unknown/cost=10", func(b *testing.B) {
		run(b, func() error { _, err := h.Compare(ctx, nil, "wrong horse battery"); return err })
	})
}

func BenchmarkGuardCheck(b *testing.B) {
	g := NewGuard(5, time.Minute)
	for i := range 10_000 {
		g.Fail(fmt.Sprintf("user%d", i), t0)
	}
	b.ReportAllocs()
	for b.Loop() {
		g.Check("user123", t0)
	}
}
