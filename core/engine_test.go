package core_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
)

func TestTradeErrorsInOrderAndChangeNothing(t *testing.T) {
	h := newHarness(t)
	alice := h.account("alice", core.RoleSpeculator, 1000)
	poor := h.account("poor", core.RoleSpeculator, 1)
	mkt := h.market("m", 0, 1000)
	if _, err := h.buy(alice, mkt, core.Yes, money.Units(10)); err != nil {
		t.Fatal(err)
	}
	closedMkt := h.market("soon closed", 0, 1000)
	before := h.e.State().Canonical()
	h.clock.Advance(0)

	huge := core.MaxAmount
	cases := []struct {
		name string
		req  core.TradeRequest
		want error
		fld  string
	}{
		{"zero shares", core.TradeRequest{Account: alice, Market: mkt, Shares: 0}, nil, "shares"},
		{"negative shares", core.TradeRequest{Account: alice, Market: mkt, Shares: -1}, nil, "shares"},
		{"too many shares", core.TradeRequest{Account: alice, Market: mkt, Shares: huge + 1}, nil, "shares"},
		{"bad side", core.TradeRequest{Account: alice, Market: mkt, Side: 2, Shares: 1}, nil, "side"},
		{"long reasoning", core.TradeRequest{Account: alice, Market: mkt, Shares: 1, Reasoning: strings.Repeat("é", 1001)}, nil, "reasoning"},
		{"negative max_cost", core.TradeRequest{Account: alice, Market: mkt, Shares: 1, HasLimit: true, Limit: -1}, nil, "max_cost"},
		{"unknown market", core.TradeRequest{Account: alice, Market: uuid.New(), Shares: 1}, core.ErrMarketNotFound, ""},
		{"unknown account", core.TradeRequest{Account: uuid.New(), Market: mkt, Shares: 1}, core.ErrAccountNotFound, ""},
		{"sell more than held", core.TradeRequest{Account: alice, Market: mkt, Side: core.No, Shares: 1, Sell: true}, core.ErrInsufficientShares, ""},
		{"huge buy", core.TradeRequest{Account: alice, Market: mkt, Shares: huge}, core.ErrInsufficientBalance, ""},
		{"slippage on buy", core.TradeRequest{Account: alice, Market: mkt, Shares: money.Units(10), HasLimit: true, Limit: money.Units(1)}, core.ErrSlippage, ""},
		{"slippage on sell", core.TradeRequest{Account: alice, Market: mkt, Shares: money.Units(10), Sell: true, HasLimit: true, Limit: money.Units(10)}, core.ErrSlippage, ""},
		{"slippage before balance", core.TradeRequest{Account: poor, Market: mkt, Shares: money.Units(100), HasLimit: true, Limit: money.Units(1)}, core.ErrSlippage, ""},
		{"insufficient balance", core.TradeRequest{Account: poor, Market: mkt, Shares: money.Units(100)}, core.ErrInsufficientBalance, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.e.Trade(h.ctx, tc.req)
			if tc.fld != "" {
				var fe *core.FieldError
				if !errors.As(err, &fe) || fe.Field != tc.fld {
					t.Fatalf("Trade(%+v) = %v, want a field error on %q", tc.req, err, tc.fld)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Trade(%+v) = %v, want %v", tc.req, err, tc.want)
			}
		})
	}
	requireEqualRecords(t, h.e.State().Canonical(), before)

	// A market past its closing time refuses trades before it is logged closed.
	h.clock.Advance(25 * time.Hour)
	if _, err := h.buy(alice, closedMkt, core.Yes, 1); !errors.Is(err, core.ErrMarketNotActive) {
		t.Fatalf("trade after closes_at = %v, want ErrMarketNotActive", err)
	}
	n, err := h.e.CloseDue(h.ctx)
	if err != nil || n != 2 {
		t.Fatalf("CloseDue = %d, %v; want 2 closed", n, err)
	}
	if v, _ := h.e.Market(closedMkt); v.Info.Status != core.StatusClosed {
		t.Fatalf("status after CloseDue = %v", v.Info.Status)
	}
	h.check()
	requireEqual(t, h.replayed(), h.e.State())
}

func requireEqualRecords(t *testing.T, got, want *core.Record) {
	t.Helper()
	if d := firstDiff(got, want); !strings.HasPrefix(d, "keys or sessions differ: 0/0") {
		t.Fatalf("state changed by failed operations: %s", d)
	}
}

func TestInsufficientLiquidityAndLimit(t *testing.T) {
	h := newHarness(t)
	alice := h.account("alice", core.RoleSpeculator, 1000)
	mkt := h.market("m", 0, 1000)
	// A split moves q on the curve (docs/API.md, "POST
	// /api/markets/split-merge"), so the shares
	// it gives can be sold back down to q0, and no further.
	sp, err := h.e.SplitMerge(h.ctx, core.SplitRequest{Account: alice, Market: mkt, Amount: money.Units(10)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.sell(alice, mkt, core.Yes, money.Units(10)); err != nil {
		t.Fatalf("sell of split shares = %v", err)
	}
	if v, _ := h.e.Market(mkt); v.Books[money.KP].Q[core.Yes] != money.Units(1000) || v.Books[money.KP].Q[core.No] != money.Units(1010) {
		t.Fatalf("q after a split of 10 and a sell of 10 yes: %v, want 1000, 1010 (split cost %s)", v.Books[money.KP].Q, sp.Cost)
	}
	// Nine buys of 0.99e9 shares take q_yes from 1e9 to 9.91e9 units; the
	// tenth would pass 1e10, which is refused before the balance is looked at.
	big := h.market("big", core.MinAlpha, 1_000_000_000)
	shares := money.Units(990_000_000)
	for i := range 9 {
		rich := h.account(fmt.Sprintf("rich%d", i), core.RoleSpeculator, 1_000_000_000)
		if _, err := h.buy(rich, big, core.Yes, shares); err != nil {
			t.Fatalf("buy %d: %v", i, err)
		}
	}
	if _, err := h.buy(alice, big, core.Yes, shares); !errors.Is(err, core.ErrLiquidityLimit) {
		t.Fatalf("buy past 1e10 = %v, want ErrLiquidityLimit", err)
	}
	h.check()
}

func TestBuySellSplitMergeSettle(t *testing.T) {
	h := newHarness(t)
	alice := h.account("alice", core.RoleSpeculator, 1000)
	bob := h.account("bob", core.RoleSpeculator, 1000)
	if err := h.e.SetReferrer(h.ctx, bob, alice, money.Units(100)); err != nil {
		t.Fatal(err)
	}
	if err := h.e.SetReferrer(h.ctx, bob, alice, money.Units(100)); !errors.Is(err, core.ErrReferrerSet) {
		t.Fatalf("second referral = %v", err)
	}
	if err := h.e.SetReferrer(h.ctx, alice, alice, 0); !errors.Is(err, core.ErrSelfReferral) {
		t.Fatalf("self referral = %v", err)
	}
	mkt := h.market("m", 0, 1000)
	v0, _ := h.e.Market(mkt)
	py, pn := v0.Prices(money.KP)
	if want := 0.5 + core.DefaultAlpha*0.6931471805599453; abs(py-want) > 1e-12 || abs(pn-want) > 1e-12 {
		t.Fatalf("initial prices %v %v, want %v", py, pn, want)
	}

	r, err := h.buy(bob, mkt, core.Yes, money.Units(100))
	if err != nil {
		t.Fatal(err)
	}
	if r.Cost <= money.Units(50) || r.Cost >= money.Units(100) || r.Vig <= 0 || r.PriceYesAfter <= py {
		t.Fatalf("buy result %+v", r)
	}
	if got := h.balance(bob, money.KP); got != money.Units(1100)-r.Cost {
		t.Fatalf("bob balance %s after paying %s", got, r.Cost)
	}
	s, err := h.sell(bob, mkt, core.Yes, money.Units(40))
	if err != nil {
		t.Fatal(err)
	}
	if s.Cost <= 0 || s.Cost >= r.Cost {
		t.Fatalf("sell result %+v", s)
	}
	sp, err := h.e.SplitMerge(h.ctx, core.SplitRequest{Account: alice, Market: mkt, Amount: money.Units(30)})
	if err != nil || sp.YesShares != money.Units(30) || sp.NoShares != money.Units(30) {
		t.Fatalf("split = %+v, %v", sp, err)
	}
	mg, err := h.e.SplitMerge(h.ctx, core.SplitRequest{Account: alice, Market: mkt, Amount: money.Units(10), Merge: true})
	if err != nil || mg.YesShares != money.Units(20) || mg.BalanceAfter != money.Units(1100)-sp.Cost+mg.Cost ||
		sp.Cost <= money.Units(30) || mg.Cost <= money.Units(10) || mg.Cost >= sp.Cost {
		t.Fatalf("merge = %+v, %v", mg, err)
	}
	if _, err := h.e.SplitMerge(h.ctx, core.SplitRequest{Account: alice, Market: mkt, Amount: money.Units(21), Merge: true}); !errors.Is(err, core.ErrInsufficientShares) {
		t.Fatalf("merge too much = %v", err)
	}
	h.check()

	res, err := h.e.Settle(h.ctx, core.SettleRequest{Market: mkt, Outcome: core.Yes})
	if err != nil {
		t.Fatal(err)
	}
	if res.TotalPaid[money.KP] != money.Units(80) || res.PositionsPaid != 2 {
		t.Fatalf("settle = %+v, want 80 paid to 2 positions", res)
	}
	if _, err := h.e.Settle(h.ctx, core.SettleRequest{Market: mkt, Outcome: core.No}); !errors.Is(err, core.ErrMarketResolved) {
		t.Fatalf("second settle = %v", err)
	}
	if _, err := h.buy(bob, mkt, core.Yes, 1); !errors.Is(err, core.ErrMarketNotActive) {
		t.Fatalf("trade on resolved market = %v", err)
	}
	if v, _ := h.e.Account(bob); len(v.Positions) != 0 || len(v.Trades) != 2 || v.Trades[0].ID != s.TradeID {
		t.Fatalf("bob after settlement: %+v", v)
	}
	h.check()
	requireEqual(t, h.replayed(), h.e.State())
}

// A losing trader's loss funds the vig: the creator gets 30% of the accrued
// vig and the referrer 20%, both capped by the market's profit, and the
// referrer's share by 20% of the referred trader's net loss.
func TestVigPaidAtSettlement(t *testing.T) {
	h := newHarness(t)
	ref, _, mkt, vig := h.vigScenario()
	if _, err := h.e.Settle(h.ctx, core.SettleRequest{Market: mkt, Outcome: core.No}); err != nil {
		t.Fatal(err)
	}
	// The market's profit (the loser's whole stake) exceeds the vig, so
	// both shares are paid in full.
	if got, want := h.balance(ref, money.KP), vig*2/10; got < want-5 || got > want {
		t.Fatalf("referrer got %s, want about %s", got, want)
	}
	if got, want := h.balance(h.admin, money.KP), vig*3/10; got < want-5 || got > want {
		t.Fatalf("creator got %s, want about %s", got, want)
	}
	h.check()
	requireEqual(t, h.replayed(), h.e.State())
}

func TestKeysAndSessions(t *testing.T) {
	h := newHarness(t)
	alice := h.account("alice", core.RoleSpeculator, 0)
	nk := func(i int) core.NewKey {
		return core.NewKey{Account: alice, Name: "k", Hash: [32]byte{byte(i)}, Prefix: "svc_live_01234567", Scopes: core.ScopeRead}
	}
	var first core.Key
	for i := range core.MaxActiveKeys {
		k, err := h.e.CreateKey(h.ctx, nk(i))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = k
		}
	}
	if _, err := h.e.CreateKey(h.ctx, nk(99)); !errors.Is(err, core.ErrKeyLimit) {
		t.Fatalf("11th key = %v", err)
	}
	adminKey := nk(50)
	adminKey.Scopes = core.ScopeAdmin
	if _, err := h.e.CreateKey(h.ctx, adminKey); !errors.Is(err, core.ErrAdminRequired) {
		t.Fatalf("admin key for a speculator = %v", err)
	}
	rot, err := h.e.RotateKey(h.ctx, alice, first.ID, [32]byte{77}, "svc_live_abcdefgh")
	if err != nil {
		t.Fatal(err)
	}
	if old, _ := h.e.KeyByHash(first.Hash); old.RevokedAt == 0 {
		t.Fatal("rotated key still active")
	}
	if k, ok := h.e.KeyByHash([32]byte{77}); !ok || k.ID != rot.ID || k.Scopes != core.ScopeRead {
		t.Fatalf("new key %+v %v", k, ok)
	}
	if _, err := h.e.RevokeKey(h.ctx, h.admin, rot.ID); !errors.Is(err, core.ErrKeyNotFound) {
		t.Fatalf("revoke another's key = %v", err)
	}
	if k, err := h.e.RevokeKey(h.ctx, alice, rot.ID); err != nil || k.RevokedAt == 0 {
		t.Fatalf("revoke = %+v, %v", k, err)
	}
	if _, err := h.e.CreateKey(h.ctx, nk(98)); err != nil {
		t.Fatalf("key after revocations: %v", err)
	}
	sess := core.Session{Hash: [32]byte{1, 2, 3}, Account: alice, ExpiresAt: h.clock.Now().Add(time.Hour).UnixNano()}
	if err := h.e.CreateSession(h.ctx, sess); err != nil {
		t.Fatal(err)
	}
	if err := h.e.RevokeSession(h.ctx, sess.Hash); err != nil {
		t.Fatal(err)
	}
	if s, ok := h.e.SessionByHash(sess.Hash); !ok || s.RevokedAt == 0 {
		t.Fatalf("session after logout %+v", s)
	}
	if err := h.e.RevokeSession(h.ctx, sess.Hash); !errors.Is(err, core.ErrSessionNotFound) {
		t.Fatalf("second logout = %v", err)
	}
	requireEqual(t, h.replayed(), h.e.State())
}

func TestCreateValidation(t *testing.T) {
	h := newHarness(t)
	if _, err := h.e.CreateAccount(h.ctx, core.NewAccount{Name: "ADMIN"}); !errors.Is(err, core.ErrNameTaken) {
		t.Fatalf("duplicate name ignoring case = %v", err)
	}
	for _, name := range []string{"ab", strings.Repeat("a", 33), "bad name", "é-accent"} {
		var fe *core.FieldError
		if _, err := h.e.CreateAccount(h.ctx, core.NewAccount{Name: name}); !errors.As(err, &fe) || fe.Field != "name" {
			t.Fatalf("name %q = %v", name, err)
		}
	}
	future := h.clock.Now().Add(time.Hour)
	cases := []struct {
		name string
		req  core.NewMarket
		fld  string
	}{
		{"no title", core.NewMarket{Category: "c", ClosesAt: future}, "title"},
		{"long title", core.NewMarket{Title: strings.Repeat("t", 201), Category: "c", ClosesAt: future}, "title"},
		{"long description", core.NewMarket{Title: "t", Description: strings.Repeat("d", 5001), Category: "c", ClosesAt: future}, "description"},
		{"no category", core.NewMarket{Title: "t", ClosesAt: future}, "category"},
		{"past", core.NewMarket{Title: "t", Category: "c", ClosesAt: future.Add(-2 * time.Hour)}, "closes_at"},
		{"alpha low", core.NewMarket{Title: "t", Category: "c", ClosesAt: future, Alpha: 0.001}, "alpha"},
		{"alpha high", core.NewMarket{Title: "t", Category: "c", ClosesAt: future, Alpha: 1.5}, "alpha"},
		{"liquidity", core.NewMarket{Title: "t", Category: "c", ClosesAt: future, Liquidity: core.MaxAmount + 1}, "liquidity"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Creator = h.admin
			var fe *core.FieldError
			if _, err := h.e.CreateMarket(h.ctx, tc.req); !errors.As(err, &fe) || fe.Field != tc.fld {
				t.Fatalf("CreateMarket(%s) = %v, want field %s", tc.name, err, tc.fld)
			}
		})
	}
	if len(h.e.Markets()) != 0 {
		t.Fatal("a failed creation left a market")
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// The read side of the Go API the HTTP layer will call: lookups by name
// ignore case, the supply counts every bonus, and a market past its closing
// time reads as closed before its close is logged.
func TestReads(t *testing.T) {
	h := newHarness(t)
	alice := h.account("Alice", core.RoleSpeculator, 1000)
	bob := h.account("bob", core.RoleSpeculator, 500)
	if err := h.e.SetReferrer(h.ctx, bob, alice, money.Units(100)); err != nil {
		t.Fatal(err)
	}
	if v, ok := h.e.AccountByName("ALICE"); !ok || v.ID != alice {
		t.Fatalf("AccountByName(ALICE) = %v, %v", v.ID, ok)
	}
	if _, ok := h.e.AccountByName("carol"); ok {
		t.Fatal("AccountByName found an unknown name")
	}
	minted, burned := h.e.Supply()
	if minted[money.KP] != money.Units(1000+500+200) || burned[money.KP] != 0 {
		t.Fatalf("supply minted %s burned %s, want 1700 and 0", minted[money.KP], burned[money.KP])
	}
	mkt := h.market("m", 0, 1000)
	v, _ := h.e.Market(mkt)
	if got := v.StatusAt(h.clock.Now().UnixNano()); got != core.StatusActive {
		t.Fatalf("status now = %v", got)
	}
	if got := v.StatusAt(v.Info.ClosesAt); got != core.StatusClosed {
		t.Fatalf("status at closes_at = %v", got)
	}
}

// TestTradeCommandResetClearsAll: a trade's command is cleared part by
// part when it goes back to the pool (command.reset), which holds only if
// a trade, answered or refused, idempotent or not, writes nothing of its
// command outside that part; and after reset the command is zero but for
// its answer channel.
func TestTradeCommandResetClearsAll(t *testing.T) {
	h := newHarness(t)
	acct := h.account("bot", core.RoleSpeculator, 1_000)
	mkt := h.market("m", 0.05, 1_000)
	answer := func(*core.TradeResult) []byte { return []byte(`{}`) }
	for _, tc := range []struct {
		name    string
		req     core.TradeRequest
		refused bool
	}{
		{"buy", core.TradeRequest{Side: core.Yes, Shares: money.Units(2), Reasoning: "why"}, false},
		{"sell", core.TradeRequest{Side: core.Yes, Sell: true, Shares: money.Units(1)}, false},
		{"idempotent buy", core.TradeRequest{Side: core.No, Shares: money.Units(1),
			Idem: core.Idempotent{Key: "k-1", Fingerprint: [32]byte{1}}, Answer: answer}, false},
		{"idempotent repeat", core.TradeRequest{Side: core.No, Shares: money.Units(1),
			Idem: core.Idempotent{Key: "k-1", Fingerprint: [32]byte{1}}, Answer: answer}, true},
		{"refused sell", core.TradeRequest{Side: core.No, Sell: true, Shares: money.Units(5)}, true},
		{"refused by its limit", core.TradeRequest{Side: core.Yes, Shares: money.Units(1), HasLimit: true, Limit: 1}, true},
		{"invalid", core.TradeRequest{Side: core.Yes}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			req.Account, req.Market, req.Currency = acct, mkt, money.KP
			set, cleared, err := core.TradeCommandLeftovers(h.ctx, h.e, req)
			if (err != nil) != tc.refused {
				t.Fatalf("%+v: error %v, want refused %v", req, err, tc.refused)
			}
			if len(set) != 0 || len(cleared) != 0 {
				t.Fatalf("%+v: fields set outside a trade's part %v, not zero after reset %v; want none", req, set, cleared)
			}
		})
	}
	h.check()
}
