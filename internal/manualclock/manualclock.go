// Package manualclock is a time source for tests that moves only when told
// to, so that expiries, closing times, deadlines and rate-limit windows are
// crossed without sleeping, and whole states (timestamps included) do not
// depend on the machine.
package manualclock

import (
	"sync"
	"time"
)

// Clock is a manual time source; its Now method is the func() time.Time
// that core.Config, transport.Config and the snapshot manager take. It is
// read by request goroutines and the engine's loops while a test moves it,
// hence the mutex.
type Clock struct {
	mu   sync.Mutex
	now  time.Time     // guarded by mu
	step time.Duration // added before every read; guarded by mu
}

// New returns a clock reading start that moves only by Advance and Set.
func New(start time.Time) *Clock { return &Clock{now: start} }

// NewTicking returns a clock reading start that also moves by step at every
// Now, before it is read, so that consecutive events get distinct,
// increasing timestamps.
func NewTicking(start time.Time, step time.Duration) *Clock {
	return &Clock{now: start, step: step}
}

// Now returns the clock's time, first moving it by its step.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

// SetStep sets how far each reading moves the clock from now on; 0 freezes
// it between calls of Advance and Set.
func (c *Clock) SetStep(step time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.step = step
}

// Advance moves the clock by d (backwards when d is negative).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Set sets the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
