package core

import (
	"sync"
	"testing"
	"time"
)

// TestRetireNotStarvedBySenders: senders whose shared holds of a market's
// sendMu overlap, so that one always holds it, as a steady flow of
// commands to a market being resolved can, do not keep its goroutine from
// retiring: a waiting Lock keeps new holds out. Each sender lets go after
// a millisecond even while the other cannot take its turn.
func TestRetireNotStarvedBySenders(t *testing.T) {
	m := &market{inbox: make(chan *command, 1)}
	e := &Engine{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	turn := [2]chan struct{}{make(chan struct{}, 1), make(chan struct{}, 1)}
	for i := range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				m.sendMu.RLock()
				select {
				case turn[1-i] <- struct{}{}: // the other may let go
				default:
				}
				select {
				case <-turn[i]: // the other holds it too
				case <-time.After(time.Millisecond):
				}
				m.sendMu.RUnlock()
			}
		})
	}
	defer func() {
		close(stop)
		wg.Wait()
	}()
	time.Sleep(10 * time.Millisecond) // the senders' holds overlap by now
	retired := make(chan struct{})
	go func() {
		e.retire(m, &scratch{})
		close(retired)
	}()
	select {
	case <-retired:
	case <-time.After(5 * time.Second):
		t.Fatal("retire still waiting after 5 s while senders held the market's lock in turn")
	}
	if !m.retired.Load() || m.inbox != nil {
		t.Fatalf("retired %v, inbox %v: want retired and no inbox", m.retired.Load(), m.inbox)
	}
}
