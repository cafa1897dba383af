package drill

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/bench/baseline"
	"marketd/bench/client"
	"marketd/bench/load"
	"marketd/core/money"
)

const testMarket = "00000000-0000-4000-8000-000000000001"

var (
	testMarketID = uuid.MustParse(testMarket)
	testKeyID    = uuid.MustParse("00000000-0000-4000-8000-0000000000aa")
)

// fakeAccount is what the fake server answers for the one bot.
type fakeAccount struct {
	kp        []client.LedgerEntry // oldest first
	yes, no   money.Amount
	keyStatus string
}

// serveFake serves a's ledgers, keys, portfolio and the one market (its
// q_yes - q_no equal to the bot's net yes shares) until the test ends.
func serveFake(t *testing.T, a fakeAccount) *client.Client {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	answer := func(ctx *fasthttp.RequestCtx, v any) {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Error(err)
		}
		ctx.SetContentType("application/json")
		ctx.SetBody(raw)
	}
	srv := baseline.Serve(ln, "fake", func(ctx *fasthttp.RequestCtx) {
		path := string(ctx.Path())
		switch {
		case path == "/api/points":
			newest := make([]client.LedgerEntry, len(a.kp))
			var balance money.Amount
			for i, e := range a.kp {
				newest[len(a.kp)-1-i] = e
				balance = e.BalanceAfter
			}
			answer(ctx, map[string]any{"balance": balance, "count": len(a.kp), "ledger": newest})
		case path == "/api/token/balance":
			answer(ctx, map[string]any{"usdc": 0, "count": 0, "ledger": []client.LedgerEntry{}})
		case path == "/api/keys":
			answer(ctx, map[string]any{"keys": []client.KeyInfo{{ID: testKeyID, Name: "load", Status: a.keyStatus}}})
		case path == "/api/portfolio":
			var pos []client.Position
			if a.yes > 0 {
				pos = append(pos, client.Position{MarketID: testMarketID, Side: "yes", Currency: "kp", Shares: a.yes})
			}
			if a.no > 0 {
				pos = append(pos, client.Position{MarketID: testMarketID, Side: "no", Currency: "kp", Shares: a.no})
			}
			answer(ctx, map[string]any{"positions": pos})
		case strings.HasPrefix(path, "/api/markets/"):
			answer(ctx, map[string]any{"id": testMarket, "liquidity": map[string]any{"q_yes": money.Units(1000) + a.yes - a.no, "q_no": money.Units(1000)}})
		default:
			ctx.SetStatusCode(fasthttp.StatusNotFound)
		}
	})
	t.Cleanup(func() {
		if err := srv.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	c := client.New(srv.Addr(), 2, 5*time.Second)
	t.Cleanup(c.Close)
	return c
}

// TestVerify: the verification counts an acknowledged entry missing or
// changed as lost, flags an entry never acknowledged nor in flight, and
// resolves an operation in flight as applied or not.
func TestVerify(t *testing.T) {
	signup := client.LedgerEntry{TxType: "signup_bonus", RefID: uuid.MustParse("00000000-0000-4000-8000-0000000000ac"), Amount: money.Units(1000), BalanceAfter: money.Units(1000)}
	buy := client.LedgerEntry{TxType: "trade_buy", RefID: uuid.MustParse("00000000-0000-4000-8000-0000000000e1"), Amount: -500_000, BalanceAfter: money.Units(1000) - 500_000}
	other := client.LedgerEntry{TxType: "trade_buy", RefID: uuid.MustParse("00000000-0000-4000-8000-0000000000e2"), Amount: -510_000, BalanceAfter: buy.BalanceAfter - 510_000}
	changed := buy
	changed.Amount, changed.BalanceAfter = -400_000, money.Units(1000)-400_000
	acked := []entry{
		{txType: signup.TxType, refID: signup.RefID, amount: signup.Amount, balanceAfter: signup.BalanceAfter},
		{txType: buy.TxType, refID: buy.RefID, amount: buy.Amount, balanceAfter: buy.BalanceAfter},
	}
	for _, c := range []struct {
		name    string
		server  fakeAccount
		pending *op
		// want
		lost, applied, dropped, violations int
		yes                                money.Amount
	}{
		{name: "intact", server: fakeAccount{kp: []client.LedgerEntry{signup, buy}, yes: money.Units(1), keyStatus: "active"},
			yes: money.Units(1)},
		{name: "acknowledged trade lost", server: fakeAccount{kp: []client.LedgerEntry{signup}, keyStatus: "active"},
			lost: 2, violations: 3, yes: money.Units(1)}, // the entry, the position, and the market's q
		{name: "acknowledged trade changed", server: fakeAccount{kp: []client.LedgerEntry{signup, changed}, yes: money.Units(1), keyStatus: "active"},
			lost: 1, violations: 1, yes: money.Units(1)},
		{name: "entry never acknowledged", server: fakeAccount{kp: []client.LedgerEntry{signup, buy, other}, yes: money.Units(2), keyStatus: "active"},
			lost: 1, violations: 3, yes: money.Units(1)}, // the entry, the position, and the market's q
		{name: "in flight, applied", server: fakeAccount{kp: []client.LedgerEntry{signup, buy, other}, yes: money.Units(2), keyStatus: "active"},
			pending: &op{kind: opBuy}, applied: 1, yes: money.Units(2)},
		{name: "in flight, not applied", server: fakeAccount{kp: []client.LedgerEntry{signup, buy}, yes: money.Units(1), keyStatus: "active"},
			pending: &op{kind: opBuy}, dropped: 1, yes: money.Units(1)},
		{name: "first key revoked", server: fakeAccount{kp: []client.LedgerEntry{signup, buy}, yes: money.Units(1), keyStatus: "revoked"},
			lost: 1, violations: 1, yes: money.Units(1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := serveFake(t, c.server)
			b := &bot{Bot: &load.Bot{Name: "bot", Key: client.Key{ID: testKeyID, Key: "svc_live_x"}},
				kp: append([]entry(nil), acked...), shares: [][2]money.Amount{{money.Units(1), 0}}, pending: c.pending}
			var f findings
			b.verify(cl, []string{testMarket}, &f)
			verifyMarkets(cl, []string{testMarket}, []*bot{b}, &f)
			if f.lost != c.lost || f.applied != c.applied || f.dropped != c.dropped || len(f.violations) != c.violations || b.shares[0][0] != c.yes {
				t.Errorf("lost %d applied %d dropped %d violations %d yes %s; want %d %d %d %d %s\nviolations: %q",
					f.lost, f.applied, f.dropped, len(f.violations), b.shares[0][0], c.lost, c.applied, c.dropped, c.violations, c.yes, f.violations)
			}
		})
	}
}
