package memjournal

import (
	"context"
	"errors"
	"testing"

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
