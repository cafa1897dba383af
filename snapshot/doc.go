// Package snapshot writes the whole state of marketd to a file now and then,
// and recovers the state from the newest valid snapshot plus the log after
// it.
//
// A snapshot is taken while trading goes on (core.State.Capture copies one
// object at a time under its own lock), so it is not one consistent cut:
// each object is at its own LSN. The file records From, the log position
// that was durable when the capture began, and Through, the highest LSN of
// any object in it. Loading it and replaying the log from From+1 applies
// exactly the records each object had not seen yet, and yields a consistent
// state as soon as the replay has passed Through. So a snapshot is published
// (renamed into place) only once the log is durable through Through.
//
// File layout (little-endian; these values never change meaning):
//
//	header   8 bytes magic "MKTSNAP3" ("MKTSNAP2" still read: its chunks are frames of record format 2), 8 bytes From, 8 bytes created-at
//	         (Unix nanoseconds)
//	chunks   uvarint length, then a frame of package wal/record (kind core.KindImage, seq =
//	         chunk number from 1) holding an image record; each frame has
//	         its own CRC-32C
//	end      a zero length byte, 8 bytes Through, 8 bytes chunk count,
//	         4 bytes CRC-32C of every byte before it
//
// Retention: after a new snapshot is in place, the log is truncated up to
// the previous snapshot's From and snapshots older than the previous one
// are deleted, so that a damaged newest snapshot can always be replaced by
// the previous one plus the longer log. While trading goes on, the one it
// would delete is kept as the spare instead, and the next snapshot is
// written over it (createTemp); recovery keeps the spare and removes only
// half-written files.
//
// Inspect recovers as Recover does without writing anything (the offline
// checker); Manager.Backup writes a snapshot and, through a function the
// caller gives, the log after it into a new data directory while trading
// goes on. Files go through internal/vfs, so that tests can fail or crash
// any operation.
package snapshot
