package core_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/internal/memjournal"
)

// recomputeAggregates derives every account's KP volume and bonuses from
// the ledgers in the state's canonical image: independently of what the
// accounts keep.
func recomputeAggregates(st *core.State) map[uuid.UUID][2]money.Amount {
	out := make(map[uuid.UUID][2]money.Amount)
	for _, ch := range st.Canonical().Accounts {
		var agg [2]money.Amount
		for _, l := range ch.Ledger {
			if l.Currency != money.KP {
				continue
			}
			switch l.Type {
			case core.TxTradeBuy:
				agg[0] -= l.Amount
			case core.TxTradeSell:
				agg[0] += l.Amount
			case core.TxSignupBonus, core.TxReferralBonus:
				agg[1] += l.Amount
			}
		}
		out[ch.ID] = agg
	}
	return out
}

func requireAggregates(t *testing.T, seed uint64, what string, st *core.State) {
	t.Helper()
	got, want := core.LeaderAggregates(st), recomputeAggregates(st)
	if !reflect.DeepEqual(got, want) {
		for id, w := range want {
			if got[id] != w {
				t.Fatalf("seed %d, %s: account %s keeps volume, bonuses %v, ledger gives %v", seed, what, id, got[id], w)
			}
		}
		t.Fatalf("seed %d, %s: %d accounts keep aggregates, %d in the image", seed, what, len(got), len(want))
	}
	if err := st.Check(); err != nil {
		t.Fatalf("seed %d, %s: %v", seed, what, err)
	}
}

// The leaderboard's aggregates equal a recomputation from the ledger on the
// live state after random operations, on a state replayed from the log, and
// on states loaded from a snapshot (its long ledgers continued over several
// changes) and then replayed, both from a log position the snapshot already
// covers (nothing may count twice) and from one taken before more trading.
func TestLeaderboardAggregatesFollowLedger(t *testing.T) {
	const stepsEach = 200
	for i := range 5 {
		seed := uint64(i) + 0x1eade4
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			w := newWorkload(t, seed)
			for step := range stepsEach {
				w.step(step)
			}
			// A fuzzy snapshot: captured, then more trading, then replay
			// from the log position durable when it began.
			from := w.h.j.Contiguous()
			var early []*core.Record
			if _, err := core.CapturePieces(w.h.e.State(), 3, 4, func(r *core.Record) error {
				early = append(early, r.Clone())
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for step := range stepsEach {
				w.step(stepsEach + step)
			}
			live := w.h.e.State()
			requireAggregates(t, seed, "live", live)
			var traded, bonused bool
			for _, agg := range core.LeaderAggregates(live) {
				traded = traded || agg[0] > 0
				bonused = bonused || agg[1] > 0
			}
			if !traded || !bonused {
				t.Fatalf("seed %d: no trade volume (%v) or no bonus (%v) to check", seed, traded, bonused)
			}

			requireAggregates(t, seed, "replayed", w.h.replayed())

			recs := w.h.j.Records(t)
			requireAggregates(t, seed, "early snapshot and replay", fromImage(t, early, recs, from))

			var late []*core.Record
			if _, err := core.CapturePieces(live, 3, 4, func(r *core.Record) error {
				late = append(late, r.Clone())
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			requireAggregates(t, seed, "snapshot alone", fromImage(t, late, recs, uint64(len(recs))))
			requireAggregates(t, seed, "snapshot and whole log", fromImage(t, late, recs, 0))
		})
	}
}

// The leaderboard ranks by profit, then volume; leaves out the house and
// accounts that never traded; serves a cached ranking until it is
// LeaderboardMaxAge old by the engine's clock; and is the same on an
// engine recovered from the log.
func TestLeaderboardRanking(t *testing.T) {
	h := newHarness(t)
	m := h.market("ranked", 0.05, 1000)
	alice := h.account("alice", core.RoleSpeculator, 1000)
	bob := h.account("bob", core.RoleSpeculator, 1000)
	carol := h.account("carol", core.RoleSpeculator, 1000)
	h.account("idle", core.RoleSpeculator, 1000)
	boss := h.account("boss", core.RoleAdmin, 500) // admins are ranked like anyone
	if err := h.e.SetReferrer(h.ctx, carol, alice, money.Units(100)); err != nil {
		t.Fatal(err)
	}
	for _, tr := range []struct {
		who    uuid.UUID
		side   core.Side
		shares int64
		sell   bool
	}{
		{alice, core.Yes, 100, false},
		{bob, core.No, 300, false},
		{carol, core.Yes, 50, false},
		{alice, core.Yes, 100, true},
		{boss, core.Yes, 10, false},
	} {
		req := core.TradeRequest{Account: tr.who, Market: m, Side: tr.side, Shares: money.Units(tr.shares), Sell: tr.sell}
		if _, err := h.e.Trade(h.ctx, req); err != nil {
			t.Fatalf("trade %+v: %v", tr, err)
		}
	}
	bonuses := map[uuid.UUID]money.Amount{alice: money.Units(1100), bob: money.Units(1000), carol: money.Units(1100), boss: money.Units(500)}
	var want []core.Leader
	for id, bonus := range bonuses {
		v, _ := h.e.Account(id)
		profit := v.Balances[money.KP] - bonus
		for _, p := range v.Positions {
			if p.Currency == money.KP {
				profit += p.Cost[core.Yes] + p.Cost[core.No]
			}
		}
		var volume money.Amount
		l, _, _ := h.e.Ledger(id, money.KP, 0, 100)
		for _, e := range l {
			if e.Type == core.TxTradeBuy || e.Type == core.TxTradeSell {
				volume += max(e.Amount, -e.Amount)
			}
		}
		want = append(want, core.Leader{Account: id, Name: v.Info.Name, Profit: profit, Volume: volume})
	}
	slices.SortFunc(want, func(x, y core.Leader) int {
		if x.Profit != y.Profit {
			return int(y.Profit - x.Profit)
		}
		return int(y.Volume - x.Volume)
	})
	total, got := h.e.Leaderboard(500)
	if total != len(want) || !reflect.DeepEqual(got, want) {
		t.Fatalf("Leaderboard(500) = %d, %+v\nwant %d, %+v", total, got, len(want), want)
	}
	if total, got := h.e.Leaderboard(2); total != len(want) || !reflect.DeepEqual(got, want[:2]) {
		t.Fatalf("Leaderboard(2) = %d, %+v, want %d, %+v", total, got, len(want), want[:2])
	}

	// A new trader shows up only once the cached ranking is old enough.
	dave := h.account("dave", core.RoleSpeculator, 1000)
	if _, err := h.buy(dave, m, core.No, money.Units(5)); err != nil {
		t.Fatal(err)
	}
	if total, _ := h.e.Leaderboard(500); total != len(want) {
		t.Fatalf("within the cache period: %d ranked, want the cached %d", total, len(want))
	}
	h.clock.Advance(core.LeaderboardMaxAge)
	total, live := h.e.Leaderboard(500)
	if total != len(want)+1 || !slices.ContainsFunc(live, func(l core.Leader) bool { return l.Account == dave }) {
		t.Fatalf("after the cache period: %d ranked %+v, want dave among %d", total, live, len(want)+1)
	}

	// Recovery rebuilds the same leaderboard from the log.
	recovered := core.NewEngine(h.replayed(), memjournal.New(), core.Config{Now: h.clock.Now, CloseInterval: -1, UsageFlushInterval: -1})
	defer recovered.Close()
	if rt, rl := recovered.Leaderboard(500); rt != total || !reflect.DeepEqual(rl, live) {
		t.Fatalf("recovered leaderboard %d, %+v\nwant %d, %+v", rt, rl, total, live)
	}
}
