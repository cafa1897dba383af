package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestCommitIntervalEndToEnd checks -commit-interval on the real server:
// eight bots trading at once, each its next trade once the last is
// answered, make the log's writer wait for more records before some
// commits (marketd_wal_commit_gathered_seconds counts them) at 10ms and
// without the flag (DefaultCommitInterval), and never at 0; every trade is
// answered 200 either way.
func TestCommitIntervalEndToEnd(t *testing.T) {
	const (
		bots = 8
		// Each trade's commit is a group only when another bot's trade
		// reached the log during the last fsync; enough trades that a
		// slow machine's runs, mostly of lone commits, still have some.
		trades = 30
	)
	tests := []struct {
		interval  string
		wantWaits bool
	}{
		{"10ms", true},
		{"0s", false},
		{"", true}, // the default
	}
	for _, tt := range tests {
		name := tt.interval
		args := []string{"-default-tier", "unlimited"}
		if name == "" {
			name = "default"
		} else {
			args = append(args, "-commit-interval", tt.interval)
		}
		t.Run(name, func(t *testing.T) {
			p := startProc(t, "commit interval "+name, procOptions{dataDir: t.TempDir(), args: args})
			c := p.client(nil)
			admin := sessionCred(c.login("admin", testAdminPassword))
			m := c.createMarket(admin, "gathered", nil)
			keys := make([]cred, bots)
			for i := range keys {
				tok, _ := c.register(fmt.Sprintf("gatherer%d", i))
				keys[i] = keyCred(c.createKey(sessionCred(tok), "bot", []string{"read", "trade"}, nil).Key)
			}
			before, _ := scrape(t, c.base+"/metrics")
			errs := make(chan error, bots)
			var wg sync.WaitGroup
			for _, k := range keys {
				wg.Go(func() {
					for range trades {
						r, err := c.try(http.MethodPost, "/api/markets/trade", k, tradeBody(m.ID.String(), "yes", "buy", "1"))
						if err == nil && r.status != http.StatusOK {
							err = fmt.Errorf("trade answered %d: %s", r.status, r.body)
						}
						if err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			after, _ := scrape(t, c.base+"/metrics")
			const gathered = "marketd_wal_commit_gathered_seconds_count"
			waits := after[gathered] - before[gathered]
			if (waits > 0) != tt.wantWaits {
				t.Errorf("-commit-interval %s: %v commits followed a wait during %d trades of %d bots; want waits: %v",
					name, waits, bots*trades, bots, tt.wantWaits)
			}
		})
	}
}

// TestSnapshotCommitIntervalEndToEnd checks -snapshot-commit-interval on
// the real server: a periodic snapshot is written with the log's commit
// interval raised to it, as its log line says, and with the log's own
// (-commit-interval, DefaultCommitInterval without the flag) when that is
// not shorter.
func TestSnapshotCommitIntervalEndToEnd(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-snapshot-commit-interval", "3ms"}, "commit_interval=3ms"},
		{[]string{"-snapshot-commit-interval", "0s"}, "commit_interval=1ms"},
		{[]string{"-snapshot-commit-interval", "500us"}, "commit_interval=1ms"},
		{[]string{"-snapshot-commit-interval", "500us", "-commit-interval", "0s"}, "commit_interval=500"},
		{[]string{"-snapshot-commit-interval", "0s", "-commit-interval", "0s"}, "commit_interval=0s"},
	} {
		name := strings.Join(tt.args, " ")
		t.Run(name, func(t *testing.T) {
			p := startProc(t, "snapshot commit interval "+name, procOptions{dataDir: t.TempDir(),
				args: append([]string{"-snapshot-every", "100ms"}, tt.args...)})
			if line := firstSnapshotLine(t, p); !strings.Contains(line, tt.want) {
				t.Fatalf("%s: %q, want %s", name, line, tt.want)
			}
		})
	}
}
