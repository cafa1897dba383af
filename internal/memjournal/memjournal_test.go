package memjournal

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"marketd/core"
)

// TestAcknowledgesInSequenceOrder: a record is acknowledged only once every
// record before it is appended, as the log's group commit does; Hold keeps
// acknowledgements back until Release; Fail answers what is pending and
// every later call with its error.
func TestAcknowledgesInSequenceOrder(t *testing.T) {
	j := New()
	s1, _ := j.Next()
	s2, _ := j.Next()
	d1, d2 := make(chan error, 1), make(chan error, 1)
	j.Append(s2, &core.Record{Kind: core.KindTrade}, d2)
	if len(d2) != 0 {
		t.Fatal("record 2 acknowledged before record 1 was appended")
	}
	j.Append(s1, &core.Record{Kind: core.KindTrade}, d1)
	if err1, err2 := <-d1, <-d2; err1 != nil || err2 != nil {
		t.Fatalf("acknowledgements %v, %v", err1, err2)
	}
	if err := j.WaitDurable(context.Background(), s2); err != nil {
		t.Fatal(err)
	}

	j.Hold()
	s3, _ := j.Next()
	d3 := make(chan error, 1)
	j.Append(s3, &core.Record{Kind: core.KindTrade}, d3)
	if len(d3) != 0 || j.Contiguous() != s3 {
		t.Fatalf("held: acknowledged %d, contiguous %d", len(d3), j.Contiguous())
	}
	j.Release()
	if err := <-d3; err != nil {
		t.Fatal(err)
	}

	j.Hold()
	s4, _ := j.Next()
	d4 := make(chan error, 1)
	j.Append(s4, &core.Record{Kind: core.KindTrade}, d4)
	failed := errors.New("fsync failed")
	j.Fail(failed)
	if err := <-d4; !errors.Is(err, failed) {
		t.Fatalf("pending record got %v, want the failure", err)
	}
	if _, err := j.Next(); !errors.Is(err, failed) {
		t.Fatalf("Next after Fail: %v", err)
	}
	if err := j.WaitDurable(context.Background(), s4); !errors.Is(err, failed) {
		t.Fatalf("WaitDurable after Fail: %v", err)
	}
	if got := len(j.Records(t)); got != 4 {
		t.Fatalf("%d records kept, want 4", got)
	}
}

// TestGateStallsNext: Next waits at a gate until it opens, and WaitUntil
// sees the waiting call.
func TestGateStallsNext(t *testing.T) {
	j := New()
	open := j.Gate()
	got := make(chan uint64, 1)
	go func() {
		seq, _ := j.Next()
		got <- seq
	}()
	j.WaitUntil(func(s State) bool { return s.AtGate == 1 })
	if len(got) != 0 {
		t.Fatal("Next returned through a shut gate")
	}
	open()
	if seq := <-got; seq != 1 {
		t.Fatalf("seq %d, want 1", seq)
	}
}

// foreignCtx is a context of a type the context package does not know, as
// fasthttp's RequestCtx is; it counts the reads of its values after the
// call it was given to returned.
type foreignCtx struct {
	done      chan struct{}
	returned  atomic.Bool
	lateReads atomic.Int64
}

func (c *foreignCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *foreignCtx) Done() <-chan struct{}       { return c.done }

func (c *foreignCtx) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}

func (c *foreignCtx) Value(any) any {
	if c.returned.Load() {
		c.lateReads.Add(1)
	}
	return nil
}

// TestWaitDurableLeavesContextAlone: once WaitDurable returned, nothing of
// it reads the context again, even when the context is done afterwards (a
// server shutting down): fasthttp resets a RequestCtx for its next request
// as soon as the handler returns. context.AfterFunc's watcher read it here
// (a race the detector reported in a transport test).
func TestWaitDurableLeavesContextAlone(t *testing.T) {
	j := New()
	for i := range 300 {
		ctx := &foreignCtx{done: make(chan struct{})}
		if err := j.WaitDurable(ctx, 0); err != nil {
			t.Fatal(err)
		}
		ctx.returned.Store(true)
		close(ctx.done)
		time.Sleep(50 * time.Microsecond)
		if n := ctx.lateReads.Load(); n != 0 {
			t.Fatalf("call %d: the context's values were read %d times after WaitDurable returned", i, n)
		}
	}
}
