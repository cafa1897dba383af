package core_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/internal/manualclock"
	"marketd/internal/memjournal"
)

// settleCall is an admin's idempotent settlement (core.IdemCall in the
// context) whose stored answer is the result's payouts as text; *answers
// counts the renderings.
func settleCall(h *harness, key string, answers *int) context.Context {
	call := &core.IdemCall{Idempotent: core.Idempotent{Key: key, Fingerprint: [32]byte{7}}, Account: h.admin,
		Answer: func(outcome any) (uint16, []byte) {
			*answers++
			r := outcome.(core.SettleResult)
			return 200, fmt.Appendf(nil, "%s %s %d %d %d", r.Market, r.Outcome, r.PositionsPaid,
				r.TotalPaid[money.KP], r.TotalPaid[money.USDC])
		}}
	return context.WithValue(h.ctx, core.IdemContextKey{}, call)
}

// TestIdempotentSettleInStepsResumes settles a market of more holders
// than one step pays with an Idempotency-Key: the answer is stored once,
// in the settlement's first record (docs/API.md, "Idempotent requests").
// The log cut right after that record and recovered holds the market
// settling and the key's answer, byte for byte the first one, so that a
// repeat is answered while the resume pays the rest; the resumed engine
// ends in the state the first one acknowledged.
func TestIdempotentSettleInStepsResumes(t *testing.T) {
	cfg := core.Config{CloseInterval: -1, UsageFlushInterval: -1, StepAccounts: 7}
	h := newHarnessConfig(t, cfg)
	mkt, _ := stepScenario(h, 40)
	h.clock.SetStep(0)
	at := h.clock.Now()
	answers := 0
	ctx := settleCall(h, "settle-1", &answers)
	res, err := h.e.Settle(ctx, core.SettleRequest{Market: mkt, Outcome: core.Yes})
	if err != nil {
		t.Fatal(err)
	}
	h.check()
	stored, err := h.e.Idempotent(h.ctx, h.admin, "settle-1")
	if err != nil || len(stored) != 1 || answers != 1 {
		t.Fatalf("stored %+v, %v after %d answers; want one entry", stored, err, answers)
	}
	want := fmt.Appendf(nil, "%s %s %d %d %d", mkt, core.Yes, res.PositionsPaid, res.TotalPaid[money.KP], res.TotalPaid[money.USDC])
	if !bytes.Equal(stored[0].Answer, want) {
		t.Fatalf("stored answer %q, settle answered %q", stored[0].Answer, want)
	}

	recs := h.j.Records(t)
	first, steps := recordsOfKind(recs, core.KindSettle)
	if len(steps) < 3 {
		t.Fatalf("%d settle records; want the settlement in steps (at least 3)", len(steps))
	}
	for i, r := range steps {
		entries := 0
		for _, ch := range r.Accounts {
			entries += len(ch.Idem)
		}
		if want := map[bool]int{true: 1, false: 0}[i == 0]; entries != want {
			t.Fatalf("settle record %d holds %d idempotency entries, want %d", i, entries, want)
		}
	}

	// Cut after the first settle record: the crash in the middle.
	cut := first + 1
	got := core.NewState()
	for i := range cut {
		if err := got.Apply(uint64(i+1), recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := got.Check(); err != nil {
		t.Fatalf("cut after the first settle record: %v", err)
	}
	cfg.Now = manualclock.New(at).Now
	e := core.NewEngine(got, memjournal.NewAfter(uint64(cut)), cfg)
	again, err := e.Idempotent(h.ctx, h.admin, "settle-1")
	if err != nil || len(again) != 1 || !bytes.Equal(again[0].Answer, stored[0].Answer) || again[0].Status != 200 {
		e.Close()
		t.Fatalf("after recovery the key answers %+v, %v; want %q", again, err, stored[0].Answer)
	}
	e.Close() // waits for the resumed steps
	if err := got.Check(); err != nil {
		t.Fatalf("resumed: %v", err)
	}
	if g, w := got.Canonical(), h.e.State().Canonical(); !reflect.DeepEqual(g, w) {
		t.Fatalf("resumed: %s", firstDiff(g, w))
	}
	if v, ok := h.e.Market(mkt); !ok || v.Info.Status != core.StatusResolved {
		t.Fatalf("market after the settlement: %+v", v.Info)
	}
	if answers != 1 {
		t.Fatalf("the answer was rendered %d times; once is the first record's", answers)
	}
}

// TestPropertySettleAnswerIsWhatStepsPay settles markets of random
// holders (seeded PCG: buys of either side or both, partial and whole
// sells) in steps of random size: the answer, counted before the first
// step, is what the steps pay, per holder (the sum of the balance
// increases) and per position (the holders whose balance rose).
func TestPropertySettleAnswerIsWhatStepsPay(t *testing.T) {
	const seed, rounds = 0x5e771e, 6
	t.Logf("seed %#x", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	for round := range rounds {
		cfg := core.Config{CloseInterval: -1, UsageFlushInterval: -1, StepAccounts: 1 + r.IntN(12)}
		h := newHarnessConfig(t, cfg)
		mkt := h.market("m", 0.02*r.Float64(), 100+r.Int64N(1000))
		n := 1 + r.IntN(60)
		holders := make([]uuid.UUID, n)
		for i := range holders {
			a := h.account(fmt.Sprintf("holder%d", i), core.RoleSpeculator, 1000)
			holders[i] = a
			for range 1 + r.IntN(3) {
				side := core.Side(r.IntN(2))
				shares := money.Amount(1 + r.Int64N(int64(money.Units(5))))
				if _, err := h.buy(a, mkt, side, shares); err != nil {
					t.Fatalf("seed %#x round %d: holder %d buys: %v", seed, round, i, err)
				}
				if r.IntN(4) == 0 {
					// Sell some or all of it back: a holder may hold no
					// winning share.
					sell := shares
					if r.IntN(2) == 0 {
						sell = 1 + money.Amount(r.Int64N(int64(shares)))
					}
					if _, err := h.sell(a, mkt, side, sell); err != nil {
						t.Fatalf("seed %#x round %d: holder %d sells: %v", seed, round, i, err)
					}
				}
			}
		}
		before := make([]money.Amount, n)
		for i, a := range holders {
			before[i] = h.balance(a, money.KP)
		}
		outcome := core.Side(r.IntN(2))
		answers := 0
		res, err := h.e.Settle(settleCall(h, "s", &answers), core.SettleRequest{Market: mkt, Outcome: outcome})
		if err != nil {
			t.Fatalf("seed %#x round %d: settle: %v", seed, round, err)
		}
		h.check()
		var paid money.Amount
		positions := 0
		for i, a := range holders {
			if d := h.balance(a, money.KP) - before[i]; d > 0 {
				paid += d
				positions++
			} else if d < 0 {
				t.Fatalf("seed %#x round %d: holder %d lost %s at settlement", seed, round, i, -d)
			}
		}
		if res.TotalPaid[money.KP] != paid || res.PositionsPaid != positions || res.TotalPaid[money.USDC] != 0 {
			t.Fatalf("seed %#x round %d (%d holders, steps of %d): answered %d positions, %s paid; the steps paid %d, %s",
				seed, round, n, cfg.StepAccounts, res.PositionsPaid, res.TotalPaid[money.KP], positions, paid)
		}
		stored, err := h.e.Idempotent(h.ctx, h.admin, "s")
		want := fmt.Appendf(nil, "%s %s %d %d %d", mkt, outcome, positions, paid, 0)
		if err != nil || len(stored) != 1 || !bytes.Equal(stored[0].Answer, want) || answers != 1 {
			t.Fatalf("seed %#x round %d: stored %+v, %v (%d answers); want %q", seed, round, stored, err, answers, want)
		}
		requireEqual(t, h.replayed(), h.e.State())
	}
}
