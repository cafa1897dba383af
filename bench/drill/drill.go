package drill

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"marketd/bench/client"
	"marketd/bench/load"
	"marketd/bench/spawn"
	"marketd/core/money"
)

const (
	// requestTimeout bounds one request of the drill.
	requestTimeout = 10 * time.Second
	// readyTimeout bounds a start or restart of the child.
	readyTimeout = 2 * time.Minute
	// stopTimeout bounds the final clean stop.
	stopTimeout = time.Minute
	// signupBonusKP funds each bot for any number of cycles.
	signupBonusKP = 1_000_000
)

// Options says how to run the drill.
type Options struct {
	// Binary is the marketd executable; DataDir its data directory (new
	// or empty).
	Binary, DataDir string
	Cycles          int
	Bots, Markets   int
	// MinLoad and MaxLoad bound the time from the start of a cycle's load
	// to its kill, drawn uniformly.
	MinLoad, MaxLoad time.Duration
	// SnapshotEveryRecords is the child's -snapshot-every-records: low, so
	// that snapshots are taken between and during the cycles.
	SnapshotEveryRecords int
	// ServerArgs are more flags for the child.
	ServerArgs []string
	Seed       uint64
	// Out receives a line per cycle.
	Out io.Writer
}

// Summary is the drill's outcome.
type Summary struct {
	Cycles       int
	Acknowledged int64
	Refused      int64
	InFlight     int64
	// Applied and Dropped split the operations in flight by what the
	// verification found.
	Applied, Dropped int
	Lost             int
	Violations       []string
	// Recovery holds each restart's time from start to ready.
	Recovery []time.Duration
	// Checks counts the offline checker's runs, all passed when no
	// violation says otherwise.
	Checks int
}

// Line returns the summary line: "K cycles, N acknowledged operations, 0
// lost, recovery p50/max".
func (s *Summary) Line() string {
	p50, mx := time.Duration(0), time.Duration(0)
	if len(s.Recovery) > 0 {
		r := slices.Sorted(slices.Values(s.Recovery))
		p50, mx = r[(len(r)-1)/2], r[len(r)-1]
	}
	return fmt.Sprintf("%d cycles, %d acknowledged operations, %d lost, recovery p50 %v / max %v (%d in flight at the kills: %d applied, %d not; %d refused; %d offline checks; %d violations)",
		s.Cycles, s.Acknowledged, s.Lost, p50.Round(time.Millisecond), mx.Round(time.Millisecond),
		s.InFlight, s.Applied, s.Dropped, s.Refused, s.Checks, len(s.Violations))
}

// OK reports a drill with nothing lost and no violation.
func (s *Summary) OK() bool { return s.Lost == 0 && len(s.Violations) == 0 }

// drill is one run's state.
type drill struct {
	o        Options
	password string
	rng      *mrand.Rand
	bots     []*bot
	markets  []string
	logPath  string
	// mu guards sum while the bots' goroutines run.
	mu  sync.Mutex
	sum Summary
}

// Run runs the drill and returns its summary; the error is for a drill
// that could not run (a child that would not start), not for a loss,
// which the summary reports.
func Run(ctx context.Context, o Options) (*Summary, error) {
	var pw [12]byte
	_, _ = rand.Read(pw[:])
	d := &drill{o: o, password: hex.EncodeToString(pw[:]), rng: mrand.New(mrand.NewPCG(o.Seed, 0)),
		logPath: filepath.Join(o.DataDir, "marketd.log")}
	p, c, err := d.start(ctx)
	if err != nil {
		return nil, err
	}
	if err := d.setup(c); err != nil {
		return nil, errors.Join(err, p.Kill())
	}
	for cycle := 1; cycle <= o.Cycles; cycle++ {
		if err := ctx.Err(); err != nil {
			return &d.sum, errors.Join(context.Cause(ctx), p.Kill())
		}
		ran, inFlight, err := d.load(p, c)
		if err != nil {
			return &d.sum, err
		}
		c.Close()
		d.check()
		began := time.Now()
		if p, c, err = d.start(ctx); err != nil {
			return &d.sum, err
		}
		recovery := time.Since(began)
		d.sum.Recovery = append(d.sum.Recovery, recovery)
		before := len(d.sum.Violations)
		d.verify(c)
		d.sum.Cycles = cycle
		fmt.Fprintf(d.o.Out, "cycle %d: killed after %v, %d in flight, restart to ready %v, %d acknowledged so far, %d lost, %d new violations\n",
			cycle, ran.Round(time.Millisecond), inFlight, recovery.Round(time.Millisecond), d.sum.Acknowledged, d.sum.Lost, len(d.sum.Violations)-before)
		for _, v := range d.sum.Violations[before:] {
			fmt.Fprintf(d.o.Out, "  violation: %s\n", v)
		}
	}
	c.Close()
	sctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	if err := p.Stop(sctx); err != nil {
		d.sum.Violations = append(d.sum.Violations, fmt.Sprintf("final clean stop: %v", err))
	}
	d.check()
	return &d.sum, nil
}

// start starts the child on the data directory and waits until it is
// ready.
func (d *drill) start(ctx context.Context) (*spawn.Process, *client.Client, error) {
	args := append([]string{
		"-fsync", "always",
		"-password-cost", "4",
		"-default-tier", "unlimited",
		"-signup-bonus", strconv.Itoa(signupBonusKP),
		"-snapshot-every-records", strconv.Itoa(d.o.SnapshotEveryRecords),
		// The drill's deposits must be credited when answered; the
		// manual custody (the default) waits for an admin.
		"-custody", "record",
	}, spawn.UnlimitedClientArgs...)
	args = append(args, d.o.ServerArgs...)
	sctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	p, err := spawn.Start(sctx, spawn.Options{Binary: d.o.Binary, DataDir: d.o.DataDir, Args: args, LogPath: d.logPath,
		AdminPassword: d.password})
	if err != nil {
		return nil, nil, fmt.Errorf("drill: start marketd (its output: %s): %w", d.logPath, err)
	}
	if _, err := p.WaitReady(sctx); err != nil {
		return nil, nil, errors.Join(fmt.Errorf("drill: marketd not ready (its output: %s): %w", d.logPath, err), p.Kill())
	}
	return p, client.New(p.Addr(), d.o.Bots+2, requestTimeout), nil
}

// setup creates the markets, the bots, their keys and wallets; all of it
// acknowledged before the first kill.
func (d *drill) setup(c *client.Client) error {
	admin, _, err := c.Login(load.AdminName, d.password)
	if err != nil {
		return fmt.Errorf("drill: log in as the admin: %w", err)
	}
	var run [4]byte
	_, _ = rand.Read(run[:])
	for i := range d.o.Markets {
		m, err := c.CreateMarket(client.Credentials{Session: admin}, fmt.Sprintf("Drill %x market %d", run, i), 365*24*time.Hour)
		if err != nil {
			return fmt.Errorf("drill: create a market: %w", err)
		}
		d.markets = append(d.markets, m.ID.String())
	}
	for i := range d.o.Bots {
		lb, err := load.NewBot(c, fmt.Sprintf("dr-%x-%03d", run, i))
		if err != nil {
			return fmt.Errorf("drill: %w", err)
		}
		var w [20]byte
		_, _ = rand.Read(w[:])
		b := &bot{Bot: lb, wallet: "0x" + hex.EncodeToString(w[:]), shares: make([][2]money.Amount, len(d.markets)),
			kp: []entry{{txType: "signup_bonus", refID: lb.Agent.ID, amount: lb.Agent.Balance, balanceAfter: lb.Agent.Balance}}}
		if err := c.LinkWallet(b.credentials(), b.wallet); err != nil {
			return fmt.Errorf("drill: link %s's wallet: %w", b.Name, err)
		}
		d.bots = append(d.bots, b)
	}
	return nil
}

// load runs the bots against the child until it kills it, at a random
// moment, and returns how long the load ran and how many operations were
// in flight.
func (d *drill) load(p *spawn.Process, c *client.Client) (time.Duration, int, error) {
	span := d.o.MaxLoad - d.o.MinLoad
	after := d.o.MinLoad
	if span > 0 {
		after += time.Duration(d.rng.Int64N(int64(span)))
	}
	began := time.Now()
	stop := make(chan struct{})
	counts := make([][3]int64, len(d.bots))
	var wg sync.WaitGroup
	for i, b := range d.bots {
		r := mrand.New(mrand.NewPCG(d.o.Seed, d.rng.Uint64()))
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				o := b.plan(r, len(d.markets))
				res, err := b.do(c, d.markets, o)
				if err != nil {
					d.mu.Lock()
					d.sum.Violations = append(d.sum.Violations, fmt.Sprintf("%s: %v", b.Name, err))
					d.mu.Unlock()
				}
				counts[i][res]++
				if res == inFlight {
					b.pending = o
					return
				}
			}
		})
	}
	time.Sleep(after) // the kill's random moment
	killErr := p.Kill()
	close(stop)
	wg.Wait()
	ran := time.Since(began)
	unanswered := 0
	for _, n := range counts {
		d.sum.Acknowledged += n[acknowledged]
		d.sum.Refused += n[refused]
		d.sum.InFlight += n[inFlight]
		unanswered += int(n[inFlight])
	}
	if killErr != nil {
		return ran, unanswered, fmt.Errorf("drill: %w", killErr)
	}
	return ran, unanswered, nil
}

// verify checks every bot and market after a restart.
func (d *drill) verify(c *client.Client) {
	var f findings
	for _, b := range d.bots {
		b.verify(c, d.markets, &f)
	}
	verifyMarkets(c, d.markets, d.bots, &f)
	d.sum.Lost += f.lost
	d.sum.Applied += f.applied
	d.sum.Dropped += f.dropped
	d.sum.Violations = append(d.sum.Violations, f.violations...)
}

// check runs the offline checker, `marketd check -data DIR`, on the data
// directory while no server runs on it.
func (d *drill) check() {
	var out bytes.Buffer
	cmd := exec.Command(d.o.Binary, "check", "-data", d.o.DataDir)
	cmd.Stdout, cmd.Stderr = &out, &out
	d.sum.Checks++
	if err := cmd.Run(); err != nil {
		d.sum.Violations = append(d.sum.Violations, fmt.Sprintf("offline checker: %v: %s", err, out.String()))
	}
}
