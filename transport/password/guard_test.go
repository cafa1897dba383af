package password

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Unix(1_700_000_000, 0)

type guardOp int

const (
	opCheck guardOp = iota
	opFail
	opSucceed
)

func (op guardOp) String() string {
	return [...]string{"Check", "Fail", "Succeed"}[op]
}

// guardStep is one call on a Guard; for opCheck, the answer expected.
type guardStep struct {
	op          guardOp
	name        string
	at          time.Duration // after t0
	wantBlocked bool
	wantRetry   time.Duration
}

func runGuardSteps(t *testing.T, g *Guard, steps []guardStep) {
	t.Helper()
	for i, s := range steps {
		now := t0.Add(s.at)
		switch s.op {
		case opFail:
			g.Fail(s.name, now)
		case opSucceed:
			g.Succeed(s.name)
		case opCheck:
			retry, blocked := g.Check(s.name, now)
			if blocked != s.wantBlocked || retry != s.wantRetry {
				t.Fatalf("step %d: Check(%q, t0+%v) = (%v, %v), want (%v, %v)",
					i, s.name, s.at, retry, blocked, s.wantRetry, s.wantBlocked)
			}
		}
	}
}

func fail(name string, at time.Duration) guardStep { return guardStep{op: opFail, name: name, at: at} }
func succeed(name string) guardStep                { return guardStep{op: opSucceed, name: name} }
func open(name string, at time.Duration) guardStep { return guardStep{op: opCheck, name: name, at: at} }
func blocked(name string, at, retry time.Duration) guardStep {
	return guardStep{op: opCheck, name: name, at: at, wantBlocked: true, wantRetry: retry}
}

func TestGuard(t *testing.T) {
	const s = time.Second
	long := strings.Repeat("x", maxNameBytes)
	tests := []struct {
		name  string
		steps []guardStep
	}{
		{"unknown name is open", []guardStep{
			open("alice", 0),
		}},
		{"below the limit is open", []guardStep{
			fail("alice", 0), fail("alice", 1*s), open("alice", 2*s),
		}},
		{"the limit blocks until block after the last failure", []guardStep{
			fail("alice", 0), fail("alice", 10*s), open("alice", 19*s),
			fail("alice", 20*s),
			blocked("alice", 20*s, 60*s),
			blocked("alice", 79*s, 1*s),
			blocked("alice", 80*s-1, 1),
			open("alice", 80*s),
		}},
		{"names are compared ignoring case", []guardStep{
			fail("Alice", 0), fail("ALICE", 1*s), fail("alice", 2*s),
			blocked("aLiCe", 3*s, 59*s),
		}},
		{"names are independent", []guardStep{
			fail("bob", 0), fail("bob", 0), fail("bob", 0),
			blocked("bob", 0, 60*s), open("alice", 0),
		}},
		{"failures in an ended window do not add up", []guardStep{
			fail("alice", 0), fail("alice", 30*s),
			fail("alice", 60*s), // opens a new window
			fail("alice", 61*s),
			open("alice", 62*s),
			fail("alice", 70*s), // third in the window from 60s
			blocked("alice", 70*s, 60*s),
		}},
		{"success forgets the failures", []guardStep{
			fail("alice", 0), fail("alice", 1*s), succeed("ALICE"),
			fail("alice", 2*s), open("alice", 3*s),
			fail("alice", 4*s), fail("alice", 5*s),
			blocked("alice", 5*s, 60*s),
		}},
		{"a failure while blocked extends the block", []guardStep{
			fail("alice", 0), fail("alice", 0), fail("alice", 0),
			fail("alice", 30*s), // passed Check before the block began
			blocked("alice", 60*s, 30*s),
			fail("alice", 70*s), // window ended, block not: still counted
			blocked("alice", 129*s, 1*s),
			open("alice", 130*s),
		}},
		{"after a block the count starts afresh", []guardStep{
			fail("alice", 0), fail("alice", 0), fail("alice", 0),
			open("alice", 60*s),
			fail("alice", 60*s), fail("alice", 61*s), open("alice", 61*s),
		}},
		{"long names are kept by their prefix", []guardStep{
			fail(long+"a", 0), fail(long+"b", 0), fail(long, 0),
			blocked(long+"C", 0, 60*s),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runGuardSteps(t, NewGuard(3, time.Minute), tt.steps)
		})
	}
}

// TestGuardFull fills a Guard of two names: names it cannot track are
// refused until an entry expires, tracked names are answered as usual.
func TestGuardFull(t *testing.T) {
	const s = time.Second
	g := NewGuardSize(3, time.Minute, 2)
	runGuardSteps(t, g, []guardStep{
		fail("a", 0), fail("b", 10*s),
		blocked("c", 20*s, 40*s), // until a's window ends
		fail("c", 20*s),          // not recorded
		open("a", 20*s),
		fail("a", 21*s), fail("a", 22*s),
		blocked("a", 22*s, 60*s),
		blocked("c", 59*s, 1*s), // no scan before 60s; then b expires at 70s
		open("c", 70*s),         // b dropped
		fail("c", 70*s),
		fail("c", 71*s),
		fail("c", 72*s),
		blocked("c", 72*s, 60*s), // c's failures were counted from 70s
	})
	if got := g.Len(); got != 2 {
		t.Errorf("Len() = %d, want 2", got)
	}
}

func TestGuardSweep(t *testing.T) {
	const s = time.Second
	g := NewGuard(2, time.Minute)
	g.Fail("window-ends-60", t0)
	g.Fail("blocked-until-90", t0.Add(20*s))
	g.Fail("blocked-until-90", t0.Add(30*s))
	g.Fail("window-ends-100", t0.Add(40*s))
	for i := range 1000 {
		g.Fail("bulk"+strings.Repeat("x", i%50)+string(rune('a'+i%26))+string(rune('a'+i/26)), t0)
	}
	bulk := g.Len() - 3
	tests := []struct {
		name        string
		at          time.Duration
		wantDropped int
		wantLen     int
	}{
		{"nothing expired", 59 * s, 0, bulk + 3},
		{"windows end", 60 * s, bulk + 1, 2},
		{"blocks end", 90 * s, 1, 1},
		{"idempotent", 90 * s, 0, 1},
		{"last", 100 * s, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := g.Sweep(t0.Add(tt.at)); got != tt.wantDropped {
				t.Errorf("Sweep(t0+%v) = %d, want %d", tt.at, got, tt.wantDropped)
			}
			if got := g.Len(); got != tt.wantLen {
				t.Errorf("Len() after Sweep(t0+%v) = %d, want %d", tt.at, got, tt.wantLen)
			}
		})
	}
	if g.peak != 0 {
		t.Errorf("peak %d after emptying, want the map remade", g.peak)
	}
}
