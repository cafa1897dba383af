package wal

import (
	"os"
	"reflect"
	"runtime"
	"unsafe"

	tidwall "github.com/tidwall/wal"
)

// The commit's fsync of the tail segment is made without handing the
// writer's processor back to the scheduler, when there is a processor to
// spare (docs/ARCHITECTURE.md, "The log's fsync and the processors").
//
// A Go system call enters the scheduler's syscall state: the runtime's
// monitor (sysmon) finds the processor held in a call longer than its tick
// (20 us), takes it back and starts or wakes a thread to run it, and the
// writer's thread must find a processor again when the fsync returns.
// An fsync takes about 0.3 ms, so every commit paid for that hand-off and,
// because a processor was taken back at every tick or two, the monitor
// never backed off its 20 us period. With one processor more than CPUs
// (marketd's default, -spare-procs) the writer can keep its processor
// through the fsync and the others still have every core. The fsync is
// then a raw system call: the runtime sees the writer as running.
//
// The cost of keeping the processor: a stop-the-world (the collector's
// start and end) waits for the fsync in flight to return, since the writer
// cannot be preempted inside it; every trade waits for that fsync anyway.
// Without a spare processor (GOMAXPROCS at most the CPUs), when tidwall's
// Log is not laid out as expected, or outside Linux (rawFsync, in
// tailsync_linux.go and tailsync_other.go), the fsync is tidwall's Sync.

// tailFileOffset is the offset of tidwall's Log.sfile (the tail segment's
// file), or -1 when it has no such field of type *os.File.
var tailFileOffset = func() uintptr {
	f, ok := reflect.TypeFor[tidwall.Log]().FieldByName("sfile")
	if !ok || f.Type != reflect.TypeFor[*os.File]() {
		return ^uintptr(0)
	}
	return f.Offset
}()

// tailFile returns tw's tail segment file, or nil when its field is not
// known. Only the writer goroutine calls it: tidwall replaces the file only
// in WriteBatch and TruncateFront, which run on the writer too, so the read
// needs no lock of tidwall's.
func tailFile(tw *tidwall.Log) *os.File {
	if tailFileOffset == ^uintptr(0) {
		return nil
	}
	return *(**os.File)(unsafe.Add(unsafe.Pointer(tw), tailFileOffset))
}

// spareProcessor reports whether the runtime runs goroutines on more
// processors than there are CPUs, so that one held through an fsync leaves
// every core in use.
func spareProcessor() bool {
	return runtime.GOMAXPROCS(0) > runtime.NumCPU()
}

// syncTail fsyncs the tail segment file and counts it in Stats.Fsyncs,
// and in Stats.HeldFsyncs when it held the writer's processor.
func (l *Log) syncTail() error {
	f := tailFile(l.tw)
	if !rawFsync || f == nil || !spareProcessor() {
		if err := l.tw.Sync(); err != nil {
			return err
		}
		l.counters.fsyncs.Add(1)
		return nil
	}
	if err := fsyncHolding(f); err != nil {
		return err
	}
	l.counters.fsyncs.Add(1)
	l.counters.heldFsyncs.Add(1)
	return nil
}
