package transport

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/core/money"
	"marketd/transport/wire"
)

// TestTradeAnswerJSON: appendTradeJSON writes what encoding/json writes for the
// trade answer (writeJSON's bytes, newline included, through writeTrade),
// for edge values and random trades (seeded PCG); a price that is not a
// finite number is an error for both.
func TestTradeAnswerJSON(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed^0x7a11))
	prices := []float64{0, 1, 0.5, 1e-6, 9.99999e-7, 1e-7, 1.5e-300, math.SmallestNonzeroFloat64,
		1e20, 1e21, 123456789e15, -0.25, -1e-9, math.MaxFloat64, math.Copysign(0, -1)}
	amounts := []money.Amount{0, 1, -1, 999_999, 1_000_000, 1_000_001, -1_500_000, core.MaxAmount,
		-core.MaxAmount, math.MaxInt64, math.MinInt64}
	times := []int64{0, 1, -1, 1_000_000_000, 1_764_000_000_123_456_789, math.MaxInt64, math.MinInt64}
	price := func() float64 {
		if r.IntN(4) == 0 {
			return prices[r.IntN(len(prices))]
		}
		return r.Float64() * math.Pow(10, float64(r.IntN(60)-30))
	}
	amount := func() money.Amount {
		if r.IntN(4) == 0 {
			return amounts[r.IntN(len(amounts))]
		}
		return money.Amount(r.Int64N(2*int64(core.MaxAmount)) - int64(core.MaxAmount))
	}
	for i := range 5000 {
		tr := core.TradeResult{TradeID: uuid.New(), Market: uuid.New(), Currency: money.Currency(r.IntN(money.NumCurrencies)),
			Side: core.Side(r.IntN(2)), Sell: r.IntN(2) == 0, Shares: amount(), Cost: amount(), Vig: amount(),
			BalanceAfter: amount(), PriceYesAfter: price(), PriceNoAfter: price(),
			Time: time.Unix(0, r.Int64()-r.Int64()), MarketSeq: r.Uint64()}
		if i%7 == 0 {
			tr.Time = time.Unix(0, times[r.IntN(len(times))])
		}
		ans := tradeAnswer(&tr)
		want, err := json.Marshal(ans)
		if err != nil {
			t.Fatalf("case %d (seed %d): json.Marshal(%+v): %v", i, seed, ans, err)
		}
		got, err := appendTradeJSON(nil, &tr)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("case %d (seed %d): %+v\nappendJSON %s, %v\nwant       %s", i, seed, ans, got, err, want)
		}
		if i%100 == 0 {
			ctx := new(fasthttp.RequestCtx)
			if err := WriteTrade(ctx, &tr); err != nil {
				t.Fatal(err)
			}
			if got, want := ctx.Response.Body(), encodeAnswer(tradeAnswer(&tr)); !bytes.Equal(got, want) {
				t.Fatalf("case %d (seed %d): writeTrade wrote %q, want %q", i, seed, got, want)
			}
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		tr := core.TradeResult{PriceNoAfter: f}
		if _, err := json.Marshal(tradeAnswer(&tr)); err == nil {
			t.Fatalf("json.Marshal took price %v", f)
		}
		if b, err := appendTradeJSON(nil, &tr); err == nil {
			t.Errorf("appendJSON took price %v: %s", f, b)
		}
	}
}

// TestJSONStringAsEncodingJSON: appendJSONString writes what json.Marshal
// writes for names and for strings it must escape.
func TestJSONStringAsEncodingJSON(t *testing.T) {
	for _, s := range []string{"yes", "no", "buy", "sell", "kp", "usdc", "side(7)", "", `a"b`, `\`, "<", ">", "&",
		"tab\t", "\x7f", "é", "\u2028", "\xff"} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString([]byte("x"), s); !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Errorf("%q: got %s, want x%s", s, got, want)
		}
	}
}

// TestTimestampAsRFC3339Nano: appendTimestamp writes what time's
// RFC3339Nano writes in UTC, for edge times, random ones (seeded PCG) and
// runs of times in one second and across seconds, so that a second's kept
// text is never given to another second.
func TestTimestampAsRFC3339Nano(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed^0x57a3))
	times := []int64{0, 1, -1, 999_999_999, 1_000_000_000, -1_000_000_000, -999_999_999, 1_764_000_000_123_456_789,
		1_764_000_000_100_000_000, 1_764_000_000_000_000_001, math.MaxInt64, math.MinInt64,
		math.MaxInt64 / 1_000_000_000 * 1_000_000_000, math.MinInt64 / 1_000_000_000 * 1_000_000_000,
		math.MinInt64/1_000_000_000*1_000_000_000 - 1}
	now := time.Now().UnixNano()
	for i := range 20000 {
		var ns int64
		switch i % 4 {
		case 0:
			ns = times[r.IntN(len(times))]
		case 1:
			ns = r.Int64() - r.Int64()
		default:
			ns = now + r.Int64N(3e9) // runs inside and across seconds
		}
		want := time.Unix(0, ns).UTC().AppendFormat([]byte("x"), time.RFC3339Nano)
		if got := appendTimestamp([]byte("x"), ns); !bytes.Equal(got, want) {
			t.Fatalf("%d (seed %d): got %s, want %s", ns, seed, got, want)
		}
	}
}

// BenchmarkTradeAnswer compares encoding/json (writeJSON's way) with
// appendTradeJSON on a typical trade's answer.
func BenchmarkTradeAnswer(b *testing.B) {
	r := core.TradeResult{TradeID: uuid.New(), Market: uuid.New(), Shares: money.Units(10), Cost: 5_422_289, Vig: 258_204,
		BalanceAfter: 994_577_711, PriceYesAfter: 0.5593447785736297, PriceNoAfter: 0.4904840617860577,
		Time: time.Now(), MarketSeq: 1}
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		ctx := new(fasthttp.RequestCtx)
		for b.Loop() {
			if err := writeJSON(ctx, 200, tradeAnswer(&r)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("appendJSON", func(b *testing.B) {
		b.ReportAllocs()
		ctx := new(fasthttp.RequestCtx)
		for b.Loop() {
			if err := WriteTrade(ctx, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// tradeAnswer is a trade's answer as wire.Trade, the form encoding/json
// encodes: the reference appendTradeJSON is held to.
func tradeAnswer(r *core.TradeResult) wire.Trade {
	return wire.Trade{
		TradeFields: wire.TradeFields{
			TradeID:  r.TradeID,
			MarketID: r.Market,
			Side:     r.Side.String(),
			Type:     tradeType(r.Sell),
			Currency: r.Currency.String(),
			Shares:   r.Shares,
			Cost:     r.Cost,
		},
		Vig:           r.Vig,
		BalanceAfter:  r.BalanceAfter,
		PriceYesAfter: r.PriceYesAfter,
		PriceNoAfter:  r.PriceNoAfter,
		CreatedAt:     wire.Timestamp(r.Time.UnixNano()),
		MarketSeq:     r.MarketSeq,
	}
}
