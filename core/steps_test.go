package core_test

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/internal/manualclock"
	"marketd/internal/memjournal"
)

// stepTestHolders and stepTestAccounts: a few thousand holders walked in
// records of a hundred, so that a crash is tried at every one of about
// twenty step boundaries (docs/ARCHITECTURE.md, "Bounded steps").
const (
	stepTestHolders  = 2000
	stepTestAccounts = 100
)

// stepScenario fills a market of h with n holders buying yes or no, one in
// seven referred by one of three referrers; it returns the market and the
// accounts in creation order (referrers first).
func stepScenario(h *harness, n int) (uuid.UUID, []uuid.UUID) {
	h.t.Helper()
	mkt := h.market("popular", 0, 1000)
	var ids []uuid.UUID
	for i := range 3 {
		ids = append(ids, h.account(fmt.Sprintf("referrer%d", i), core.RoleSpeculator, 0))
	}
	for i := range n {
		a := h.account(fmt.Sprintf("holder%d", i), core.RoleSpeculator, 100)
		if i%7 == 0 {
			if err := h.e.SetReferrer(h.ctx, a, ids[i%3], 0); err != nil {
				h.t.Fatal(err)
			}
		}
		side := core.Side(i % 2)
		if _, err := h.buy(a, mkt, side, money.Units(int64(1+i%5))); err != nil {
			h.t.Fatalf("holder %d buys: %v", i, err)
		}
		ids = append(ids, a)
	}
	return mkt, ids
}

// settleRecords returns the records of kind in recs, with the index of the
// first.
func recordsOfKind(recs []*core.Record, kind core.Kind) (first int, out []*core.Record) {
	first = -1
	for i, r := range recs {
		if r.Kind == kind {
			if first < 0 {
				first = i
			}
			out = append(out, r)
		}
	}
	return first, out
}

// TestSettleInBoundedSteps settles a market of a few thousand holders with a
// small step bound: every record changes at most the bound's holders (and
// their referrers), the market is settling between the records and the
// invariant checker holds there, and the balances, payouts and vig come
// out as a settlement in one record gives them.
func TestSettleInBoundedSteps(t *testing.T) {
	small := newHarnessConfig(t, core.Config{CloseInterval: -1, UsageFlushInterval: -1, StepAccounts: stepTestAccounts})
	whole := newHarness(t)
	mktS, idsS := stepScenario(small, stepTestHolders)
	mktW, idsW := stepScenario(whole, stepTestHolders)

	resS, err := small.e.Settle(small.ctx, core.SettleRequest{Market: mktS, Outcome: core.Yes})
	if err != nil {
		t.Fatal(err)
	}
	resW, err := whole.e.Settle(whole.ctx, core.SettleRequest{Market: mktW, Outcome: core.Yes})
	if err != nil {
		t.Fatal(err)
	}
	small.check()
	whole.check()
	resS.Market, resW.Market = uuid.Nil, uuid.Nil
	if resS != resW {
		t.Fatalf("settlement in steps %+v, in one record %+v", resS, resW)
	}
	for i := range idsS {
		if gs, gw := small.balance(idsS[i], money.KP), whole.balance(idsW[i], money.KP); gs != gw {
			t.Fatalf("account %d: balance %s after steps, %s after one record", i, gs, gw)
		}
	}
	if gs, gw := small.balance(core.HouseID, money.KP), whole.balance(core.HouseID, money.KP); gs != gw {
		t.Fatalf("house: %s after steps, %s after one record", gs, gw)
	}

	first, steps := recordsOfKind(small.j.Records(t), core.KindSettle)
	if want := (stepTestHolders + stepTestAccounts - 1) / stepTestAccounts; len(steps) != want {
		t.Fatalf("%d settle records, want %d", len(steps), want)
	}
	if _, one := recordsOfKind(whole.j.Records(t), core.KindSettle); len(one) != 1 {
		t.Fatalf("one-record settlement wrote %d records", len(one))
	}
	for i, r := range steps {
		holders := 0
		for _, ch := range r.Accounts {
			if len(ch.Positions) > 0 {
				holders++
			}
		}
		// Holders, their three referrers, the house and the creator.
		if holders > stepTestAccounts || len(r.Accounts) > stepTestAccounts+5 {
			t.Fatalf("step %d: %d holders, %d accounts; bound %d", i, holders, len(r.Accounts), stepTestAccounts)
		}
		want := core.StatusSettling
		if i == len(steps)-1 {
			want = core.StatusResolved
		}
		if got := r.Markets[0].Info.Status; got != want {
			t.Fatalf("step %d of %d: market %s, want %s", i, len(steps), got, want)
		}
	}
	// The state after each step: settling, and every invariant holds.
	recs := small.j.Records(t)
	st := core.NewState()
	for i, r := range recs {
		if err := st.Apply(uint64(i+1), r); err != nil {
			t.Fatal(err)
		}
		if i >= first {
			if err := st.Check(); err != nil {
				t.Fatalf("after record %d (step %d): %v", i+1, i-first, err)
			}
		}
	}
	requireEqual(t, st, small.e.State())
}

// TestSettleStepsResumeAfterCrashAtEveryRecord cuts the log after each
// record of a settlement in steps, recovers from the cut (the market is
// settling there, and every invariant holds), lets a new engine resume,
// and compares what it ends with to the state the first engine
// acknowledged.
func TestSettleStepsResumeAfterCrashAtEveryRecord(t *testing.T) {
	cfg := core.Config{CloseInterval: -1, UsageFlushInterval: -1, StepAccounts: stepTestAccounts}
	h := newHarnessConfig(t, cfg)
	mkt, _ := stepScenario(h, stepTestHolders)
	// One instant for the settlement, so that the resumed steps write the
	// very records the first engine wrote.
	h.clock.SetStep(0)
	at := h.clock.Now()
	if _, err := h.e.Settle(h.ctx, core.SettleRequest{Market: mkt, Outcome: core.No}); err != nil {
		t.Fatal(err)
	}
	h.check()
	resumeAtEveryCut(t, h, cfg, at, core.KindSettle, core.StatusSettling)
}

// TestCloseStepsResumeAfterCrashAtEveryRecord does the same for the close
// of a market with a few thousand holders, each notified once.
func TestCloseStepsResumeAfterCrashAtEveryRecord(t *testing.T) {
	cfg := core.Config{CloseInterval: -1, UsageFlushInterval: -1, StepAccounts: stepTestAccounts}
	h := newHarnessConfig(t, cfg)
	mkt, ids := stepScenario(h, stepTestHolders)
	h.clock.SetStep(0)
	h.clock.Advance(25 * time.Hour)
	at := h.clock.Now()
	if n, err := h.e.CloseDue(h.ctx); err != nil || n != 1 {
		t.Fatalf("close due: %d, %v", n, err)
	}
	h.check()
	if v, _ := h.e.Market(mkt); v.Info.Status != core.StatusClosed {
		t.Fatalf("market %s after the close", v.Info.Status)
	}
	for _, id := range ids[3:] {
		closed := 0
		page, _ := h.e.Notes(id, false, core.MaxNotes)
		for _, n := range page.Notes {
			if n.Kind == core.NoteMarketClosed && n.Market == mkt {
				closed++
			}
		}
		if closed != 1 {
			t.Fatalf("holder %s has %d market_closed notes, want 1", id, closed)
		}
	}
	_, steps := recordsOfKind(h.j.Records(t), core.KindMarketClosed)
	if want := (stepTestHolders + stepTestAccounts - 1) / stepTestAccounts; len(steps) != want {
		t.Fatalf("%d close records, want %d", len(steps), want)
	}
	resumeAtEveryCut(t, h, cfg, at, core.KindMarketClosed, core.StatusClosing)
}

// resumeAtEveryCut recovers from the log of h cut after each record of
// kind, checks the invariants and the status in progress there, resumes
// with an engine on a clock frozen at at, and requires the state h's
// engine acknowledged.
func resumeAtEveryCut(t *testing.T, h *harness, cfg core.Config, at time.Time, kind core.Kind, inProgress core.Status) {
	t.Helper()
	recs := h.j.Records(t)
	first, steps := recordsOfKind(recs, kind)
	if len(steps) < 2 {
		t.Fatalf("%d records of kind %d: no step boundary to cut at", len(steps), kind)
	}
	want := h.e.State().Canonical()
	// Each cut is recovered by a replay of its own, since an engine takes
	// the state it runs on.
	for cut := first + 1; cut < len(recs); cut++ {
		// The market's status there is the one its last record wrote.
		if ms := recs[cut-1].Markets; len(ms) != 1 || ms[0].Info.Status != inProgress {
			t.Fatalf("cut after record %d: market changes %+v, want one in %s", cut, ms, inProgress)
		}
		got := core.NewState()
		for i := 0; i < cut; i++ {
			if err := got.Apply(uint64(i+1), recs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := got.Check(); err != nil {
			t.Fatalf("cut after record %d: %v", cut, err)
		}
		j := memjournal.NewAfter(uint64(cut))
		c := manualclock.New(at)
		cfg.Now = c.Now
		e := core.NewEngine(got, j, cfg)
		e.Close() // waits for the resumed steps
		if err := got.Check(); err != nil {
			t.Fatalf("resumed after record %d: %v", cut, err)
		}
		if g := got.Canonical(); !reflect.DeepEqual(g, want) {
			t.Fatalf("resumed after record %d: %s", cut, firstDiff(g, want))
		}
	}
}

// hookJournal is a memjournal.Journal that calls after once each record is
// appended, on the appending goroutine.
type hookJournal struct {
	*memjournal.Journal
	after func(seq uint64, rec *core.Record)
}

func (j *hookJournal) Append(seq uint64, rec *core.Record, done chan<- error) {
	j.Journal.Append(seq, rec, done)
	j.after(seq, rec)
}

// TestTradingRefusedWhileSettling holds a settlement after its second step
// and trades, splits and settles again meanwhile: each is refused at once
// (the market's goroutine is busy with the steps), and the market's view
// says settling.
func TestTradingRefusedWhileSettling(t *testing.T) {
	h := &harness{t: t, ctx: t.Context(), clock: newClock()}
	hold, release := make(chan struct{}), make(chan struct{})
	settleSteps := 0
	j := &hookJournal{Journal: memjournal.New(), after: func(_ uint64, rec *core.Record) {
		if rec.Kind == core.KindSettle {
			if settleSteps++; settleSteps == 2 {
				close(hold)
				<-release
			}
		}
	}}
	h.j = j.Journal
	h.e = core.NewEngine(core.NewState(), j, core.Config{Now: h.clock.Now, CloseInterval: -1, UsageFlushInterval: -1, StepAccounts: 4})
	t.Cleanup(h.e.Close)
	h.admin = h.account("admin", core.RoleAdmin, 0)
	mkt, ids := stepScenario(h, 20)

	settled := make(chan error, 1)
	go func() {
		_, err := h.e.Settle(h.ctx, core.SettleRequest{Market: mkt, Outcome: core.Yes})
		settled <- err
	}()
	<-hold
	if v, _ := h.e.Market(mkt); v.Info.Status != core.StatusSettling || v.Info.Status.String() != "settling" {
		t.Errorf("market %s while settling", v.Info.Status)
	}
	if _, err := h.buy(ids[3], mkt, core.Yes, money.Units(1)); !errors.Is(err, core.ErrMarketNotActive) {
		t.Errorf("trade while settling: %v, want ErrMarketNotActive", err)
	}
	if _, err := h.e.SplitMerge(h.ctx, core.SplitRequest{Account: ids[3], Market: mkt, Amount: money.Units(1)}); !errors.Is(err, core.ErrMarketNotActive) {
		t.Errorf("split while settling: %v, want ErrMarketNotActive", err)
	}
	close(release)
	if err := <-settled; err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.Settle(h.ctx, core.SettleRequest{Market: mkt, Outcome: core.No}); !errors.Is(err, core.ErrMarketResolved) {
		t.Errorf("settle again: %v, want ErrMarketResolved", err)
	}
	h.check()
}

// marketGoroutines counts the market goroutines running.
func marketGoroutines(t *testing.T) int {
	t.Helper()
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 2); err != nil {
		t.Fatal(err)
	}
	return bytes.Count(b.Bytes(), []byte("marketd/core.(*Engine).run("))
}

// settledMarketGoroutines counts the market goroutines once the count has
// held still for 50 samples in a row: the goroutines of an engine an
// earlier test closed may still be ending, and a count taken among them
// as a test's base would be one too high once they are gone.
func settledMarketGoroutines(t *testing.T) int {
	t.Helper()
	n, same := marketGoroutines(t), 0
	for range 100_000 {
		runtime.Gosched()
		m := marketGoroutines(t)
		if m != n {
			n, same = m, 0
			continue
		}
		if same++; same == 50 {
			return n
		}
	}
	t.Fatalf("the market goroutines never held still (last %d)", n)
	return 0
}

// waitGoroutines waits until the market goroutines number want, spinning
// rather than sleeping: a retiring goroutine ends right after its last
// answer.
func waitGoroutines(t *testing.T, want int) {
	t.Helper()
	for range 100_000 {
		if marketGoroutines(t) == want {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("%d market goroutines, want %d", marketGoroutines(t), want)
}

// TestResolvedMarketKeepsNoGoroutine settles markets and requires their
// goroutines gone, every read of them working and every command answered
// as before, and no goroutine started for them after a restart.
func TestResolvedMarketKeepsNoGoroutine(t *testing.T) {
	const markets = 12
	h := newHarness(t)
	trader := h.account("trader", core.RoleSpeculator, 1000)
	base := settledMarketGoroutines(t)
	var mkts []uuid.UUID
	for i := range markets {
		m := h.market(fmt.Sprintf("m%d", i), 0, 100)
		if _, err := h.buy(trader, m, core.Yes, money.Units(2)); err != nil {
			t.Fatal(err)
		}
		mkts = append(mkts, m)
	}
	waitGoroutines(t, base+markets)
	for _, m := range mkts[:markets/2] {
		if _, err := h.e.Settle(h.ctx, core.SettleRequest{Market: m, Outcome: core.Yes}); err != nil {
			t.Fatal(err)
		}
	}
	waitGoroutines(t, base+markets/2)
	h.check()
	for _, m := range mkts[:markets/2] {
		v, ok := h.e.Market(m)
		if !ok || v.Info.Status != core.StatusResolved || v.Info.Outcome != core.Yes {
			t.Fatalf("resolved market %s: %+v, %v", m, v, ok)
		}
		if _, err := h.buy(trader, m, core.Yes, money.Units(1)); !errors.Is(err, core.ErrMarketNotActive) {
			t.Fatalf("trade on a resolved market: %v", err)
		}
		if _, err := h.e.Settle(h.ctx, core.SettleRequest{Market: m, Outcome: core.No}); !errors.Is(err, core.ErrMarketResolved) {
			t.Fatalf("settle a resolved market: %v", err)
		}
		if _, err := h.e.Propose(h.ctx, core.ProposeRequest{Account: trader, Market: m, Outcome: core.No}); !errors.Is(err, core.ErrMarketResolved) {
			t.Fatalf("propose on a resolved market: %v", err)
		}
	}
	if _, err := h.e.CloseDue(h.ctx); err != nil {
		t.Fatal(err)
	}
	// A restart starts goroutines only for the markets not resolved.
	st := h.replayed()
	h.e.Close()
	waitGoroutines(t, base)
	e := core.NewEngine(st, h.j, core.Config{Now: h.clock.Now, CloseInterval: -1, UsageFlushInterval: -1})
	defer e.Close()
	waitGoroutines(t, base+markets/2)
	if _, err := e.Trade(h.ctx, core.TradeRequest{Account: trader, Market: mkts[0], Side: core.Yes, Shares: money.Units(1)}); !errors.Is(err, core.ErrMarketNotActive) {
		t.Fatalf("trade on a resolved market after restart: %v", err)
	}
	if _, err := e.Trade(h.ctx, core.TradeRequest{Account: trader, Market: mkts[markets-1], Side: core.Yes, Shares: money.Units(1)}); err != nil {
		t.Fatalf("trade on an active market after restart: %v", err)
	}
}

// countNotes returns how many notifications of kind about mkt each of ids
// holds.
func countNotes(h *harness, ids []uuid.UUID, kind core.NoteKind, mkt uuid.UUID) map[int]int {
	h.t.Helper()
	counts := make(map[int]int) // notes held -> accounts
	for _, id := range ids {
		page, _ := h.e.Notes(id, false, core.MaxNotes)
		n := 0
		for _, note := range page.Notes {
			if note.Kind == kind && note.Market == mkt {
				n++
			}
		}
		counts[n]++
	}
	return counts
}

// TestOracleNotifiesHoldersInSteps proposes and challenges on a market of
// a few thousand holders with a small step bound: each holder hears of
// each once, in records within the bound, and so does the proposer, a
// holder too; a crash at every step of the challenge's notifications
// resumes to the state acknowledged. (The code before the steps refused
// more than 200,000 holders.)
func TestOracleNotifiesHoldersInSteps(t *testing.T) {
	cfg := core.Config{CloseInterval: -1, UsageFlushInterval: -1, OracleInterval: -1, StepAccounts: stepTestAccounts}
	h := newHarnessConfig(t, cfg)
	mkt, ids := stepScenario(h, stepTestHolders)
	proposer := h.account("proposer", core.RoleSpeculator, 1000)
	if _, err := h.buy(proposer, mkt, core.Yes, money.Units(1)); err != nil {
		t.Fatal(err)
	}
	holders := append(ids[3:], proposer)
	challenger := h.account("challenger", core.RoleSpeculator, 1000)
	h.clock.Advance(25 * time.Hour)

	p, err := h.e.Propose(h.ctx, core.ProposeRequest{Account: proposer, Market: mkt, Outcome: core.Yes})
	if err != nil {
		t.Fatal(err)
	}
	h.check()
	if c := countNotes(h, holders, core.NoteOracleProposed, mkt); c[1] != len(holders) {
		t.Fatalf("oracle_proposed notes held by the holders: %v, want one each", c)
	}
	recs := h.j.Records(t)
	_, steps := recordsOfKind(recs, core.KindOracleProposed)
	if want := (len(holders) + stepTestAccounts - 1) / stepTestAccounts; len(steps) != want {
		t.Fatalf("%d proposal records, want %d", len(steps), want)
	}
	for i, r := range steps {
		if len(r.Accounts) > stepTestAccounts+1 { // and the proposer's bond
			t.Fatalf("proposal record %d changes %d accounts, bound %d", i, len(r.Accounts), stepTestAccounts)
		}
	}
	if v, _ := h.e.Market(mkt); v.Info.Step != (core.Step{}) {
		t.Fatalf("step left after the notifications: %+v", v.Info.Step)
	}

	h.clock.SetStep(0)
	at := h.clock.Now()
	if _, err := h.e.Challenge(h.ctx, core.ChallengeRequest{Account: challenger, Proposal: p.ID}); err != nil {
		t.Fatal(err)
	}
	h.check()
	if c := countNotes(h, holders, core.NoteOracleChallenged, mkt); c[1] != len(holders) {
		t.Fatalf("oracle_challenged notes held by the holders and the proposer: %v, want one each", c)
	}
	resumeAtEveryCut(t, h, cfg, at, core.KindOracleChallenge, core.StatusActive)
}
