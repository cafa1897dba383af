package stall

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/trace"
	"sync/atomic"
	"time"

	"marketd/wal"
)

// Defaults and bounds of Config.
const (
	DefaultThreshold    = 25 * time.Millisecond
	DefaultWindow       = 2 * time.Second
	DefaultFiles        = 8
	DefaultMaxFileBytes = 64 << 20
	MinWindow           = 100 * time.Millisecond
	MaxWindow           = time.Minute
	MaxThreshold        = time.Minute
	MaxFiles            = 1000
	MinMaxFileBytes     = 1 << 10
	MaxMaxFileBytes     = 4 << 30
)

// Config sets a Recorder up; zero fields take their defaults.
type Config struct {
	// Dir receives the traces, stall-<UTC time>-<kind>.trace; it is made
	// (mode 0700) when missing. Required.
	Dir string
	// Threshold is the duration of a request or a commit past which the
	// last Window of trace is written. Default DefaultThreshold.
	Threshold time.Duration
	// Window is how much trace is kept (the flight recorder's MinAge) and
	// the least time between two traces written: triggers within it are
	// folded into the next trace, which then covers them. Default
	// DefaultWindow.
	Window time.Duration
	// Files bounds the traces in Dir: writing one more removes the
	// oldest. Default DefaultFiles.
	Files int
	// MaxFileBytes bounds one trace's size: the flight recorder is asked
	// to keep no more than half of it (its bound is a hint), and a trace
	// that reaches it anyway is removed, not kept cut short. Default
	// DefaultMaxFileBytes.
	MaxFileBytes int64
	// Logger receives a line per trace written or dropped. Default
	// slog.Default().
	Logger *slog.Logger
}

// withDefaults returns c with zero fields set to their defaults, or an
// error naming the field out of range.
func (c Config) withDefaults() (Config, error) {
	c.Threshold = cmp.Or(c.Threshold, DefaultThreshold)
	c.Window = cmp.Or(c.Window, DefaultWindow)
	c.Files = cmp.Or(c.Files, DefaultFiles)
	c.MaxFileBytes = cmp.Or(c.MaxFileBytes, DefaultMaxFileBytes)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	switch {
	case c.Dir == "":
		return c, errors.New("stall: Dir is empty")
	case c.Threshold < 0 || c.Threshold > MaxThreshold:
		return c, fmt.Errorf("stall: Threshold %v is out of range (0, %v]", c.Threshold, MaxThreshold)
	case c.Window < MinWindow || c.Window > MaxWindow:
		return c, fmt.Errorf("stall: Window %v is out of range [%v, %v]", c.Window, MinWindow, MaxWindow)
	case c.Files < 1 || c.Files > MaxFiles:
		return c, fmt.Errorf("stall: Files %d is out of range [1, %d]", c.Files, MaxFiles)
	case c.MaxFileBytes < MinMaxFileBytes || c.MaxFileBytes > MaxMaxFileBytes:
		return c, fmt.Errorf("stall: MaxFileBytes %d is out of range [%d, %d]", c.MaxFileBytes, MinMaxFileBytes, int64(MaxMaxFileBytes))
	}
	return c, nil
}

// Kind is what took longer than the threshold.
type Kind uint8

// The kinds of trigger.
const (
	KindRequest Kind = iota // an HTTP request, from read whole to answer ready
	KindCommit              // a log commit, from its write to its last acknowledgement
	KindHeld                // a log commit's first record held back by a market between reserving and appending it
	numKinds
)

var kindNames = [numKinds]string{"request", "commit", "held"}

// String returns the kind's name, as in file names and log lines.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// trigger is one duration past the threshold, as the recorder's goroutine
// is told of it.
type trigger struct {
	kind   Kind
	took   time.Duration
	route  string     // a request's route pattern
	commit wal.Commit // a commit's figures, formatted by the writer
	at     time.Time  // when it was seen: the stall ended then
}

// what describes t for the log line of its trace: the request's route,
// or the commit's figures.
func (t trigger) what() string {
	if t.kind == KindRequest {
		return t.route
	}
	c := t.commit
	return fmt.Sprintf("records=%d write=%v fsync=%v held=%v", c.Records, c.Write, c.Fsync, c.Held)
}

// Recorder keeps the flight recorder and writes its window when told of
// a stall. Its Observe methods may be called from any goroutine, before
// Start and after Close too (they do nothing then).
type Recorder struct {
	cfg Config
	fr  *trace.FlightRecorder

	// running is true between Start and Close: triggers are taken.
	running  atomic.Bool
	triggers chan trigger // capacity 1: a trigger while one waits is only counted
	// seen counts every duration past the threshold, by kind; written
	// counts the traces kept.
	seen    [numKinds]atomic.Uint64
	written atomic.Uint64
	dropped atomic.Uint64

	// stop and done are set by Start, for Close; Start and Close are
	// called by one goroutine, the recorder's owner.
	stop context.CancelFunc
	done chan struct{}
}

// New returns a recorder of cfg, having made its directory and removed
// the traces an earlier process left half written there; Start starts it.
func New(cfg Config) (*Recorder, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := prepareDir(cfg.Dir); err != nil {
		return nil, err
	}
	return &Recorder{
		cfg: cfg,
		fr: trace.NewFlightRecorder(trace.FlightRecorderConfig{
			MinAge:   cfg.Window,
			MaxBytes: uint64(cfg.MaxFileBytes / 2),
		}),
		triggers: make(chan trigger, 1),
	}, nil
}

// Threshold returns the duration past which a request or a commit
// triggers a trace.
func (r *Recorder) Threshold() time.Duration { return r.cfg.Threshold }

// Start starts the flight recorder and the goroutine that writes the
// traces. Close stops them.
func (r *Recorder) Start() error {
	if r.running.Load() {
		return errors.New("stall: recorder already started")
	}
	if err := r.fr.Start(); err != nil {
		return fmt.Errorf("stall: start the flight recorder: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.stop, r.done = cancel, make(chan struct{})
	// A trigger sent before Start or before the last Close is stale.
	select {
	case <-r.triggers:
	default:
	}
	r.running.Store(true)
	go r.loop(ctx)
	return nil
}

// Close stops taking triggers, waits for a trace being written and stops
// the flight recorder. It may be called more than once, and without Start.
func (r *Recorder) Close() {
	if !r.running.Swap(false) {
		return
	}
	r.stop()
	<-r.done
	r.fr.Stop()
}

// ObserveRequest is told of a request of route that took took; past the
// threshold it triggers a trace.
func (r *Recorder) ObserveRequest(route string, took time.Duration) {
	if took > r.cfg.Threshold {
		r.fire(trigger{kind: KindRequest, took: took, route: route})
	}
}

// ObserveCommit implements wal.Observer: a commit whose write to last
// acknowledgement, or whose first record's hold, took longer than the
// threshold triggers a trace. It runs on the log's releaser goroutine:
// it only compares and, past the threshold, sends without blocking.
func (r *Recorder) ObserveCommit(c wal.Commit) {
	switch {
	case c.Took > r.cfg.Threshold:
		r.fire(trigger{kind: KindCommit, took: c.Took, commit: c})
	case c.Held > r.cfg.Threshold:
		r.fire(trigger{kind: KindHeld, took: c.Held, commit: c})
	}
}

// fire counts t and hands it to the writer unless one waits already.
func (r *Recorder) fire(t trigger) {
	if !r.running.Load() {
		return
	}
	r.seen[t.kind].Add(1)
	t.at = time.Now()
	select {
	case r.triggers <- t:
	default:
	}
}

// Stats are a recorder's counts since it started.
type Stats struct {
	// Triggers counts the requests and commits past the threshold, by Kind.
	Triggers [numKinds]uint64
	// Written counts the traces kept; Dropped those not written or
	// removed (an error, or larger than MaxFileBytes).
	Written, Dropped uint64
}

// Stats returns the recorder's counts.
func (r *Recorder) Stats() Stats {
	var s Stats
	for k := range s.Triggers {
		s.Triggers[k] = r.seen[k].Load()
	}
	s.Written, s.Dropped = r.written.Load(), r.dropped.Load()
	return s
}

// loop writes a trace for each trigger, at most one per window: a trigger
// within a window of the last trace waits for the window's end, so that
// the next trace covers it without repeating the last one. It exits when
// ctx is done, and closes r.done.
func (r *Recorder) loop(ctx context.Context) {
	defer close(r.done)
	var last time.Time
	var seenAtLast uint64
	for {
		var t trigger
		select {
		case <-ctx.Done():
			return
		case t = <-r.triggers:
		}
		if wait := time.Until(last.Add(r.cfg.Window)); wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			}
		}
		// Triggers that came meanwhile are in this trace's window.
		select {
		case <-r.triggers:
		default:
		}
		last = time.Now()
		seen := r.totalSeen()
		r.write(t, last, seen-seenAtLast)
		seenAtLast = seen
	}
}

// totalSeen is the triggers of every kind since Start.
func (r *Recorder) totalSeen() uint64 {
	var n uint64
	for k := range r.seen {
		n += r.seen[k].Load()
	}
	return n
}
