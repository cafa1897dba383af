package load

import (
	"errors"
	"fmt"
	"time"
)

// Pauses stops the target's server process (SIGSTOP) every Every for For
// and resumes it (SIGCONT), during measured runs: the same stall, at the
// same moments of the run, for marketd and for each handler it is
// compared with, so that how each drains the backlog a stall leaves can be
// compared (docs/PERFORMANCE.md, "The drain after a stall"). A paused
// process is a stall of everything in it at once; after it, as after a
// slow fsync, every connection's request is waiting.
type Pauses struct {
	Every, For time.Duration
}

// maxPause bounds Pauses.For: far longer than any stall worth studying,
// and well short of a /metrics scrape's timeout (scrapeTimeout), so that
// a mistaken setting neither leaves a server stopped for long nor fails
// the scrapes that mark the snapshots. marketd-load also keeps it under
// its request timeout.
const maxPause = 2 * time.Second

// On reports whether p asks for pauses.
func (p Pauses) On() bool { return p.Every > 0 }

// Validate checks that each pause ends before the next is due.
func (p Pauses) Validate() error {
	switch {
	case p.Every < 0 || p.For < 0:
		return fmt.Errorf("load: pauses every %v for %v: negative", p.Every, p.For)
	case p.Every == 0 && p.For == 0:
		return nil
	case !pausesSupported:
		return errPausesUnsupported
	case p.Every == 0:
		return fmt.Errorf("load: pauses of %v with no period", p.For)
	case p.For == 0 || p.For > maxPause:
		return fmt.Errorf("load: a pause of %v is not in (0, %v]", p.For, maxPause)
	case p.Every <= p.For:
		return fmt.Errorf("load: pauses every %v for %v: each must end before the next", p.Every, p.For)
	}
	return nil
}

// errPausesUnsupported refuses pauses off Linux, whose thread priority
// and sleep the pauser uses (pause_linux.go).
var errPausesUnsupported = errors.New("load: pauses are implemented on Linux only")

// errPausesHere refuses pauses of a server this process serves: stopping
// it would stop the load too.
var errPausesHere = errors.New("load: pauses need the server in a process of its own")

// pauser pauses one process on a schedule until stopped.
type pauser struct {
	p    Pauses
	pid  int
	stop chan struct{}
	done chan pauseLog
}

// pauseLog is what a pauser did: the pauses as windows, whether its
// thread ran at a real-time priority (without it a pause may last longer
// than asked on a busy machine), and the first error.
type pauseLog struct {
	windows  []Window
	realtime bool
	err      error
}

// startPauser starts pausing pid every p.Every from start, the last
// pause due before end: one due later would hold only the run's last
// answers.
func startPauser(p Pauses, pid int, start, end time.Time) *pauser {
	ps := &pauser{p: p, pid: pid, stop: make(chan struct{}), done: make(chan pauseLog, 1)}
	go func() { ps.done <- ps.run(start, end) }()
	return ps
}

// finish stops the schedule, after the pause under way if any, and
// returns what was done.
func (ps *pauser) finish() pauseLog {
	close(ps.stop)
	return <-ps.done
}

func (ps *pauser) run(start, end time.Time) pauseLog {
	var log pauseLog
	release, realtime := pauseThread()
	defer release()
	log.realtime = realtime
	next := start.Add(ps.p.Every)
	timer := time.NewTimer(time.Until(next))
	defer timer.Stop()
	for ; next.Before(end); next = next.Add(ps.p.Every) {
		select {
		case <-ps.stop:
			return log
		case <-timer.C:
		}
		w, err := pauseOnce(ps.pid, ps.p.For)
		if err != nil {
			log.err = fmt.Errorf("load: pause pid %d: %w", ps.pid, err)
			return log
		}
		log.windows = append(log.windows, w)
		timer.Reset(time.Until(next.Add(ps.p.Every)))
	}
	<-ps.stop
	return log
}
