// Package stall provides a stall recorder: it keeps the last seconds of
// the Go execution trace in memory (runtime/trace.FlightRecorder) and,
// when a request or a log commit takes longer than a threshold, writes
// them to a file in a directory, so that a rare stall of a long run can be
// seen after the fact without tracing the whole run (docs/OPERATIONS.md,
// "Stall traces").
//
// The request path and the log's releaser only compare a duration with
// the threshold and, past it, make a non-blocking send; the trace is
// written by the recorder's own goroutine. At most one trace is written
// per window, so that one stall, seen by every request it held, gives one
// file, and the files are bounded in number (the oldest are removed) and
// in size (a trace larger than the bound is not kept).
//
// An execution trace holds what the Go runtime records of the process:
// the timing of goroutine, processor and thread state changes, system
// calls, garbage collections and heap sizes, and the stack of each event
// (function names, source files and lines). It holds no memory contents:
// no request, key, password or balance; marketd adds no annotation.
package stall
