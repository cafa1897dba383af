// Package memjournal provides core.Journal in memory for tests and
// benchmarks: Journal keeps a deep copy of every record and acknowledges
// them in sequence order, as the log's group commit does, and a test can
// hold its acknowledgements back, fail it, or stall Next; Null keeps
// nothing and acknowledges at once, the cost of the engine alone.
package memjournal

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"marketd/core"
)

// Journal is an in-memory core.Journal. Records are acknowledged in
// sequence order, each once every record before it was appended, unless
// the journal is held (Hold) or failed (Fail).
type Journal struct {
	mu      sync.Mutex
	cond    sync.Cond // broadcast on every change below, and by Wake
	first   uint64    // the first seq this journal holds
	next    uint64
	recs    map[uint64]*core.Record
	dones   map[uint64]chan<- error
	durable uint64 // every record up to it is appended and acknowledged
	held    bool
	failed  error
	waiters int           // calls inside WaitDurable
	gate    chan struct{} // when not nil, Next waits for it to close
	atGate  int           // calls of Next waiting at the gate
}

var _ core.Journal = (*Journal)(nil)

// New returns an empty journal that acknowledges as records arrive.
func New() *Journal { return NewAfter(0) }

// NewAfter returns an empty journal that continues a log whose records
// through last are durable elsewhere: an engine over a recovered state
// gets last+1 from its first Next.
func NewAfter(last uint64) *Journal {
	j := &Journal{first: last + 1, next: last, durable: last,
		recs: make(map[uint64]*core.Record), dones: make(map[uint64]chan<- error)}
	j.cond.L = &j.mu
	return j
}

// Next reserves the next sequence number. While a gate is set (Gate), it
// waits for the gate to open; after Fail, it fails.
func (j *Journal) Next() (uint64, error) {
	j.mu.Lock()
	gate := j.gate
	if gate != nil {
		j.atGate++
		j.cond.Broadcast()
	}
	j.mu.Unlock()
	if gate != nil {
		<-gate
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if gate != nil {
		j.atGate--
	}
	if j.failed != nil {
		return 0, j.failed
	}
	j.next++
	return j.next, nil
}

// Append keeps a deep copy of rec and acknowledges it on done once every
// record before it is appended, unless the journal is held; after Fail,
// done receives the failure.
func (j *Journal) Append(seq uint64, rec *core.Record, done chan<- error) {
	c := rec.Clone()
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.failed != nil {
		if done != nil {
			done <- j.failed
		}
		return
	}
	j.recs[seq], j.dones[seq] = c, done
	j.advance()
}

// advance acknowledges every record up to the first gap unless held.
// Caller holds j.mu.
func (j *Journal) advance() {
	for !j.held && j.failed == nil && j.recs[j.durable+1] != nil {
		j.durable++
		if d := j.dones[j.durable]; d != nil {
			d <- nil
		}
		delete(j.dones, j.durable)
	}
	j.cond.Broadcast()
}

// WaitDurable waits until every record up to seq is acknowledged, the
// journal fails, or ctx is done.
//
// ctx is not touched once it returns: a transport handler's context is
// fasthttp's RequestCtx, which the server resets and reuses for the next
// request. context.AfterFunc would not do: for a context of a foreign
// type it starts a goroutine that may still read ctx (its Value, for the
// cause) after stop, when ctx is done by then too.
func (j *Journal) WaitDurable(ctx context.Context, seq uint64) error {
	returned := make(chan struct{})
	var watcher sync.WaitGroup
	watcher.Go(func() {
		select {
		case <-ctx.Done():
			j.Wake()
		case <-returned:
		}
	})
	defer watcher.Wait()
	defer close(returned)
	j.mu.Lock()
	defer j.mu.Unlock()
	j.waiters++
	defer func() { j.waiters-- }()
	j.cond.Broadcast()
	for j.durable < seq {
		switch {
		case j.failed != nil:
			return j.failed
		case ctx.Err() != nil:
			return ctx.Err()
		}
		j.cond.Wait()
	}
	return nil
}

// Hold stops acknowledging: records are kept, their done channels wait.
func (j *Journal) Hold() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.held = true
}

// Release acknowledges what Hold held back and acknowledges again as
// records arrive.
func (j *Journal) Release() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.held = false
	j.advance()
}

// Fail makes the journal fail as a log does after a failed fsync: every
// record not acknowledged yet gets err, and so do later calls.
func (j *Journal) Fail(err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.failed = err
	for seq, d := range j.dones {
		if d != nil {
			d <- err
		}
		delete(j.dones, seq)
	}
	j.cond.Broadcast()
}

// Gate makes Next wait until the returned function is called, so that a
// market goroutine can be stalled inside a command.
func (j *Journal) Gate() (open func()) {
	gate := make(chan struct{})
	j.mu.Lock()
	j.gate = gate
	j.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			j.mu.Lock()
			j.gate = nil
			j.mu.Unlock()
			close(gate)
		})
	}
}

// State is what WaitUntil's condition sees. Records must not be changed.
type State struct {
	Records     map[uint64]*core.Record // every record appended, by seq
	Durable     uint64                  // acknowledged through this seq
	Unacked     int                     // appended and not acknowledged
	Waiters     int                     // calls waiting in WaitDurable
	AtGate      int                     // calls of Next waiting at the gate
	LastReserve uint64                  // the last seq Next returned
}

// WaitUntil blocks until cond holds. cond runs with the journal locked,
// after every change to it and after every Wake.
func (j *Journal) WaitUntil(cond func(State) bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for !cond(State{Records: j.recs, Durable: j.durable, Unacked: len(j.dones),
		Waiters: j.waiters, AtGate: j.atGate, LastReserve: j.next}) {
		j.cond.Wait()
	}
}

// Wake makes WaitUntil check its condition again, for a condition that
// also reads something outside the journal.
func (j *Journal) Wake() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.cond.Broadcast()
}

// Contiguous returns the last seq through which every record is appended.
func (j *Journal) Contiguous() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := j.durable
	for j.recs[n+1] != nil {
		n++
	}
	return n
}

// Appended returns the number of records appended.
func (j *Journal) Appended() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.recs)
}

// Records returns the records in sequence order, failing t on a gap.
// A journal made by NewAfter returns those after its start.
func (j *Journal) Records(t testing.TB) []*core.Record {
	t.Helper()
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]*core.Record, 0, len(j.recs))
	for seq := j.first; seq <= j.next; seq++ {
		r, ok := j.recs[seq]
		if !ok {
			t.Fatalf("memjournal: record %d missing of %d reserved", seq, j.next)
		}
		out = append(out, r)
	}
	return out
}

// Null is a core.Journal that keeps nothing and acknowledges every record
// as soon as it is appended: benchmarks use it to measure the engine
// without the log. The zero Null is ready.
type Null struct{ seq atomic.Uint64 }

var _ core.Journal = (*Null)(nil)

// Next reserves the next sequence number.
func (j *Null) Next() (uint64, error) { return j.seq.Add(1), nil }

// Append acknowledges at once.
func (j *Null) Append(_ uint64, _ *core.Record, done chan<- error) { done <- nil }

// WaitDurable returns at once: everything appended is acknowledged.
func (j *Null) WaitDurable(context.Context, uint64) error { return nil }
