package core

import "context"

// Journal is where core makes its records durable; package wal implements it
// on a write-ahead log with group commit.
//
// An operation reserves a sequence number with Next while it holds every
// object it changes (the market goroutine, the account locks), applies the
// record to memory, then hands it over with Append. Reserving under the
// objects' locks is what makes the log order agree with the order of changes
// to every object. Append must not wait for the disk: the caller goes on with
// its next command while the record is being synced, and done receives the
// outcome of the commit (nil once the record is durable).
type Journal interface {
	// Next reserves the next sequence number. Every reserved number must be
	// appended, or the log stalls behind the gap. It blocks while the
	// journal's queue is full, and fails once the journal has failed.
	Next() (uint64, error)
	// Append hands over the record for a reserved sequence number. done, a
	// channel with room for one value, receives nil when the record is
	// durable or the error that stopped the journal. Append does not retain
	// rec after it returns, so the caller may reuse the record's memory.
	Append(seq uint64, rec *Record, done chan<- error)
	// WaitDurable returns once every record up to seq is durable, or the
	// error that stopped the journal. An answer that rests on an earlier
	// change (a key already revoked, a market already resolved) waits for
	// that change's record: it must not be given while a crash could still
	// undo the change.
	WaitDurable(ctx context.Context, seq uint64) error
}
