package snapshot

import "runtime"

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
// Only the accounts are walked at the lower priority. A lowering cannot be
// undone (raising it back would need CAP_SYS_NICE), so it comes at the
// last pass, and the markets' and keys' passes before it run at the
// process's priority; captureAuth copies the key table under its read
// lock, which every request may need. The accounts' walk holds each
// account's lock only while it copies that account, and a trade waits for
// it only when it touches that one account. The thread is never given
// back: the goroutine exits locked to it, and the runtime then ends the
// thread, or parks it for good when it is the process's main thread, which
// cannot end (runtime.LockOSThread); either way no other goroutine runs at
// its priority. A thread the runtime starts while the snapshot's is
// current is cloned by the runtime's template thread, not by the locked
// one (runtime.newm), so it does not inherit the priority
// (TestSnapshotThreadNice).
//
// What the lowering costs: the thread holds one of the runtime's
// processors while the kernel keeps it waiting, and a collection's
// stop-the-world waits until it reaches a safe point. Where marketd's own
// threads are the machine's load, they stop for it and free a core; where
// other processes keep every core busy, the wait grows with the nice value
// (docs/PERFORMANCE.md, "The periodic snapshot's thread at nice 19": up to
// 100 ms at 19, 17 ms at 10, 8 ms at 0, in a toy program against two busy
// loops). Hence the default of 10, which helped the 1,000,000-account
// row as much as 19 did.

// DefaultThreadNice is the nice value of a periodic snapshot's accounts
// pass that cmd/marketd's -snapshot-nice defaults to: about a tenth of a
// core that a thread at nice 0 keeps busy, so that the trades come first,
// a saturated machine slows the snapshots without stopping them, and a
// stop-the-world waits for the thread briefly.
const DefaultThreadNice = 10

// MaxThreadNice is the highest nice value (the lowest priority) Linux has.
const MaxThreadNice = 19

// ownThread reports whether the snapshot must run on a thread of its own,
// which accounts lowers (onOwnThread).
func (p *pacer) ownThread() bool { return threadPriorities && p != nil && p.nice > 0 }

// accounts is called before each chunk is encoded, with whether it holds
// accounts: at the first that does, it lowers the thread's priority to
// nice, once. Chunks come in Capture's order, markets and keys first, so
// that only the accounts' pass, which holds no lock a trade waits for but
// the account being copied, runs at the lower priority.
func (p *pacer) accounts(has bool) {
	if !has || !p.ownThread() || p.lowered {
		return
	}
	p.lowered = true
	p.niced, p.niceErr = lowerThreadPriority(p.nice)
}

// onOwnThread runs f on a goroutine locked to a thread of its own and
// returns when f does. The goroutine exits without unlocking, so the
// runtime ends the thread (or parks the main thread for good) instead of
// running other goroutines on it at whatever priority f left it
// (priority.go).
func onOwnThread(f func()) {
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		defer close(done)
		f()
	}()
	<-done
}
