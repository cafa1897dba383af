package baseline

import (
	"net"
	"testing"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core/money"
	"marketd/transport"
)

// BenchmarkLeastTradeParts measures each part of the least-trade
// handler's work per request on its own, on one goroutine: the request
// id, the key, the body, the trade on the market's goroutine (with its
// record) and the answer. What the closed loop's server CPU per request
// adds beyond their sum is the HTTP server's, the hand-offs' and the
// group commit's (docs/PERFORMANCE.md, "The least trade request").
func BenchmarkLeastTradeParts(b *testing.B) {
	market := uuid.New()
	setup := LeastSetup{Markets: []uuid.UUID{market}, Balance: money.Units(1_000_000_000)}
	setup.AddKey(testKey)
	h := &leastTrade{keys: map[[32]byte]int{setup.KeyHashes[0]: 0}, accounts: make([]leastAccount, 1)}
	h.accounts[0].balance.Store(int64(setup.Balance))
	m := newLeastMarket(market, 1, 0, nil)
	body := []byte(`{"market_id":"` + market.String() + `","side":"yes","shares":1,"type":"buy"}`)
	header := []byte("Bearer " + testKey)

	b.Run("request-id", func(b *testing.B) {
		var ctx fasthttp.RequestCtx
		ctx.Init(&fasthttp.Request{}, &net.TCPAddr{}, nil)
		for b.Loop() {
			h.setRequestID(&ctx)
		}
	})
	b.Run("key", func(b *testing.B) {
		for b.Loop() {
			if _, ok := h.authenticate(header); !ok {
				b.Fatal("the key was refused")
			}
		}
	})
	b.Run("body", func(b *testing.B) {
		for b.Loop() {
			if _, err := transport.DecodeTrade(body, uuid.Nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	req, err := transport.DecodeTrade(body, uuid.Nil)
	if err != nil {
		b.Fatal(err)
	}
	o := &leastOrder{account: &h.accounts[0], req: req}
	b.Run("trade-and-record", func(b *testing.B) {
		// Buys of yes and no in turn: each trade starts where the last
		// one ended, so the memo saves one curve and the other is
		// evaluated, as in a market traded by many accounts (a buy and
		// its sell would find both curves in the memo).
		for b.Loop() {
			o.req.Side = 1 - o.req.Side
			if err := m.trade(o); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("answer", func(b *testing.B) {
		ctx := new(fasthttp.RequestCtx)
		for b.Loop() {
			r := m.result(o)
			if err := transport.WriteTrade(ctx, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
