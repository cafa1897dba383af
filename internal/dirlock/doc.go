// Package dirlock locks marketd's data directory with flock(2) on a file
// named LOCK in it, so that a second server, or any other writer, started on
// a directory in use is refused with a clear error instead of writing into
// a log another process owns. The server holds an exclusive lock for its
// whole life; the offline checker takes a shared one, which fails while a
// server runs and keeps a server from starting while it reads.
//
// flock locks belong to the open file description: the kernel drops them
// when the process exits, kill -9 included, so a crash never leaves a
// stale lock behind.
package dirlock
