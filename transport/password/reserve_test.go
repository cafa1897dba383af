package password

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// TestReserveForTrusted: with every ordinary place taken, Compare gets
// ErrBusy and CompareTrusted is admitted on the reserve, up to its size.
func TestReserveForTrusted(t *testing.T) {
	const workers, queue, reserved = 1, 1, 2
	h := NewHasherReserve(workers, queue, reserved, bcrypt.MinCost)
	started, release := holdHashes(h)
	errs := make(chan error, workers+queue+reserved)
	for range workers + queue {
		go func() {
			_, err := h.Hash(context.Background(), "password")
			errs <- err
		}()
	}
	<-started
	waitAdmitted(h, workers+queue)
	if _, err := h.Compare(context.Background(), nil, "password"); !errors.Is(err, ErrBusy) {
		t.Fatalf("Compare with the pool full: %v, want ErrBusy", err)
	}
	for range reserved {
		go func() {
			_, err := h.CompareTrusted(context.Background(), nil, "password")
			errs <- err
		}()
	}
	for len(h.reserved) < reserved {
		runtime.Gosched()
	}
	if _, err := h.CompareTrusted(context.Background(), nil, "password"); !errors.Is(err, ErrBusy) {
		t.Errorf("CompareTrusted with the reserve full: %v, want ErrBusy", err)
	}
	close(release)
	for range workers + queue + reserved {
		if err := <-errs; err != nil {
			t.Errorf("admitted call: %v", err)
		}
	}
	if len(h.admitted) != 0 || len(h.reserved) != 0 || len(h.working) != 0 {
		t.Errorf("slots left taken: admitted %d, reserved %d, working %d", len(h.admitted), len(h.reserved), len(h.working))
	}
}
