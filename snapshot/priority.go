package snapshot

// A periodic snapshot's accounts at a lower thread priority
// (docs/PERFORMANCE.md, "The periodic snapshot's thread at nice 19"). The
// walk, encoding and writing of a million accounts is about 0.4 s of one
// core's work, taken every Options.Every from a machine whose trades keep
// most of two cores busy: at the kernel's default priority it takes its
// core's full share, and the trades queue behind it. Go cannot prioritize
// goroutines, but the kernel prioritizes threads: the snapshot's goroutine
// is locked to a thread of its own, and that thread's nice value raised, so
// that the kernel runs it on what the trades leave idle.
//
// Only the accounts are walked at the lower priority. The walk holds each
// account's lock only while it copies that account, and a trade waits for
// it only when it touches the one account being copied; the markets' and
// the keys' passes, before it, hold locks every request may need
// (captureAuth's read lock of the key table), which a thread the kernel
// keeps waiting must not hold. The thread is never given back: the
// goroutine exits locked to it, and the runtime then ends the thread, or
// parks it for good when it is the process's main thread, which cannot
// end (runtime.LockOSThread); either way no other goroutine runs at its
// priority, and raising it back would need CAP_SYS_NICE. A thread the
// runtime starts while the snapshot's is current is cloned by the
// runtime's template thread, not by the locked one (runtime.newm), so it
// does not inherit the lowered priority (TestSnapshotThreadNice).

// DefaultThreadNice is the nice value of a periodic snapshot's accounts
// pass that cmd/marketd's -snapshot-nice defaults to: the lowest priority,
// which still runs it about 1.5% of a core that a thread at nice 0 keeps
// busy, so that a saturated machine slows its snapshots but does not stop
// them.
const DefaultThreadNice = 19

// MaxThreadNice is the highest nice value (the lowest priority) Linux has.
const MaxThreadNice = 19
