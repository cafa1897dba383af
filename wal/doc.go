// Package wal is marketd's write-ahead log: torn-tail repair, replay, and a
// writer with group commit that implements core.Journal. The records and
// the frames it stores are encoded by package wal/record. It is built on
// github.com/tidwall/wal, which stores entries as uvarint(len)+data in
// segment files and lacks what a financial log needs; this package adds it.
//
// # On disk
//
// Each tidwall entry holds one frame (record.AppendFramed): magic, format
// version, record kind, seq (equal to the tidwall index), the record encoded
// by record.Append, and a CRC-32C of all of it. Tidwall has no
// checksum: without the frame a flipped bit reads back as different data,
// and zero bytes at the end of a segment read back as empty entries. The
// frame catches both; its seq catches a whole entry in the wrong place.
//
// # Recovery
//
// Open first repairs the last segment (repair.go): tidwall refuses to open a
// torn last entry. A bad frame with no valid frame after it is a torn tail,
// cut at the last whole frame after the file is copied aside; a bad frame
// followed by a valid one is corruption, and Open refuses with the file and
// offset. Replay (replay.go) then decodes and verifies every record from a
// given seq, in every segment, and refuses any damage there. Replay runs
// before Start and calls its function on the caller's goroutine, in order,
// while worker goroutines decode the chunks ahead (pipeline.go) and the next
// segment file is read in the background.
//
// Reader (reader.go) reads a log directory without writing anything, for
// the offline checker: the same segments and checks as Open and Replay, a
// torn tail reported instead of cut. CopyLog (copy.go) copies a live log
// for an online backup, cutting the copy after the last whole frame.
//
// # Commit pipeline
//
//	actor:  Next (seq reserved under the actor's locks)
//	        apply to memory, Append (encode here, place in the seq's slot)
//	        go on with the next command; done receives the outcome later
//	writer: take the ready records following the last one written, in seq
//	        order, up to MaxBatchRecords / MaxBatchBytes and the record that
//	        fills the current segment
//	        one tidwall WriteBatch (one write)
//	        fsync the segment file, unless tidwall's fsync of a full segment
//	        did (and the directory after a new segment)
//	        hand the commit to the releaser; loop
//	releaser: send nil on each record's done, in seq order
//
// Why this shape:
//
//   - An fsync costs about 0.3 ms here, so one per record caps the log at
//     about 3,000 records/s. One fsync per batch of everything that arrived
//     meanwhile (group commit) raises that to over a million: the batch grows
//     with the load, and a lone record still waits only one fsync.
//   - Actors never wait for the disk. Encoding happens in Append, on the
//     actor's goroutine, so the single writer only copies bytes and syncs;
//     the actor's next command overlaps the fsync of the previous one.
//   - Sequence numbers are reserved in the order objects change (under
//     their locks) but records arrive in any order from many actors. The
//     writer writes only the contiguous prefix that is ready, so the log
//     order is the seq order and a record never lands before one it
//     follows. A slot ring indexed by seq makes the hand-over lock-free.
//   - A reply is released only after the fsync that covers its record and
//     every record before it: what a client was told is durable.
//   - The answers are sent by a goroutine of their own, the releaser, so
//     that the callers they wake are queued on its processor rather than
//     on the writer's, which the next fsync blocks (writer.go, release).
//     At most releaseQueue commits wait for it; then the writer waits.
//   - The queue is bounded: Next blocks once QueueRecords records are
//     reserved and not written, which pushes back on the actors instead of
//     growing memory without limit.
//   - The directory is fsynced after a commit that wrote to a segment file
//     created since its last fsync, because tidwall creates segment files
//     without ever syncing the directory: without it, a crash could lose a
//     whole acknowledged segment. The writer tells such commits from the
//     segment file's size, as tidwall's record of the segment holds it
//     (segtrack.go); an fsync of an unchanged directory after every commit
//     cost a device flush each time.
//   - Tidwall is opened with NoSync and the writer calls Sync itself after
//     WriteBatch: the same single fsync per batch that tidwall would do, but
//     the write and the fsync can be told apart in Stats. Tidwall still
//     fsyncs a full segment before starting the next, inside WriteBatch; a
//     commit ends with the record that fills a segment, so that this fsync
//     is the commit's own and no commit pays for two (writer.go, write).
//   - Tidwall keeps the current segment in memory and grows it by append;
//     the writer gives each new segment a buffer of its full size and
//     reuses them (segbuf.go), so that the log allocates nothing per record.
//     The writer puts a commit's frames straight into that buffer's spare
//     room and hands tidwall a batch over them (staged.go), so that a frame
//     is not copied into tidwall's batch buffer first.
//   - Any write, fsync or truncation error is fatal and sticky (fail in
//     writer.go): every pending and later record gets the error, Next
//     fails, nothing is retried or acknowledged. After a failed fsync Linux
//     may have dropped the dirty pages and marked them clean, so a retry can
//     "succeed" without the data on disk (PostgreSQL's fsyncgate). Only a
//     restart, with repair and replay, knows what is on disk.
//
// # Ownership
//
// The tidwall log, the directory handle and the commit state belong to the
// goroutine that called Open until Start, then to the writer goroutine, then
// to Close once the writer has exited. TruncateFront is executed by the
// writer. Reservations (Log.mu) are shared by Next, the writer and Close;
// WaitDurable's wake-up channel has its own mutex; the two are never held
// together (their place in the whole lock order: package core's doc,
// "Lock order"). Everything else other goroutines read is published through
// atomics by its single writer.
package wal
