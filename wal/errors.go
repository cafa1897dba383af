package wal

import (
	"errors"
	"fmt"

	"marketd/core"

	"marketd/wal/record"
)

// Sentinel errors. Match them with errors.Is: the errors returned wrap them
// with the file, byte offset or sequence number concerned.
var (
	// ErrCorrupt reports bytes that are not a valid frame or record: a bad
	// magic, version, CRC or sequence number, a truncated or over-long
	// field, an unknown enum value, trailing bytes, or damage anywhere in
	// the log other than a torn tail. It is record.ErrCorrupt, so that the
	// codec's errors match it too.
	ErrCorrupt = record.ErrCorrupt

	// ErrFailed reports that a write, fsync or truncation failed. The
	// failure is sticky: the log acknowledges nothing after it, and the
	// process must restart and replay (see the package comment).
	// It wraps core.ErrJournalFailed, which transport answers with 503.
	ErrFailed = fmt.Errorf("wal: log failed: %w", core.ErrJournalFailed)

	// ErrClosed reports a call on a closed log, or a record whose Append
	// came too late to be written before Close.
	ErrClosed = errors.New("wal: log closed")

	// ErrOutOfRange reports a sequence number outside the log: a Replay
	// from before its first record or past its end, or a TruncateFront
	// past what is durable.
	ErrOutOfRange = errors.New("wal: sequence number out of range")

	// ErrStarted reports a call that is only allowed before Start, such as
	// Replay: once started, the writer goroutine owns the log files.
	ErrStarted = errors.New("wal: log already started")
)
