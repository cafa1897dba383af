package transport

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
)

// TestStoredAnswerRoundTrip: a stored answer renders the very bytes of the
// answer it was stored for, for random trades, splits and merges (seeded
// PCG); every shorter prefix, and a trailing byte, is refused.
func TestStoredAnswerRoundTrip(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	amount := func() money.Amount { return money.Amount(r.Int64N(2*int64(core.MaxAmount)) - int64(core.MaxAmount)) }
	price := func() float64 {
		if r.IntN(10) == 0 {
			return []float64{0, 1, math.SmallestNonzeroFloat64, 0.1}[r.IntN(4)]
		}
		return r.Float64()
	}
	for i := range 2000 {
		tr := core.TradeResult{TradeID: uuid.New(), Market: uuid.New(), Currency: money.Currency(r.IntN(money.NumCurrencies)),
			Side: core.Side(r.IntN(2)), Sell: r.IntN(2) == 0, Shares: amount(), Cost: amount(), Vig: amount(),
			BalanceAfter: amount(), PriceYesAfter: price(), PriceNoAfter: price(),
			Time: time.Unix(0, r.Int64()).UTC(), MarketSeq: r.Uint64()}
		sr := core.SplitResult{Market: uuid.New(), Currency: money.Currency(r.IntN(money.NumCurrencies)), Merge: r.IntN(2) == 0,
			Amount: amount(), Cost: amount(), Vig: amount(), BalanceAfter: amount(), YesShares: amount(), NoShares: amount(),
			PriceYesAfter: price(), PriceNoAfter: price(), MarketSeq: r.Uint64()}
		item, err := json.Marshal(tradeAnswer(&tr))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			stored, want []byte
		}{
			{storeTrade(&tr, true), encodeAnswer(tradeAnswer(&tr))},
			{storeTrade(&tr, false), item},
			{storeSplit(&sr), encodeAnswer(splitMergeAnswer(&sr))},
		} {
			got, err := renderStored(c.stored)
			if err != nil || !bytes.Equal(got, c.want) {
				t.Fatalf("case %d (seed %d): rendered %q, %v; want %q", i, seed, got, err, c.want)
			}
			if i%100 == 0 {
				for n := range len(c.stored) {
					if _, err := renderStored(c.stored[:n]); err == nil {
						t.Fatalf("a prefix of %d of %d bytes rendered", n, len(c.stored))
					}
				}
				if _, err := renderStored(append(c.stored[:len(c.stored):len(c.stored)], 0)); err == nil {
					t.Fatal("a trailing byte rendered")
				}
			}
		}
	}
}

// TestStoredAnswerSize logs the size of a typical trade's stored answer,
// the figure docs/API.md gives.
func TestStoredAnswerSize(t *testing.T) {
	r := core.TradeResult{TradeID: uuid.New(), Market: uuid.New(), Shares: money.Units(10), Cost: 5_422_289, Vig: 258_204,
		BalanceAfter: 994_577_711, PriceYesAfter: 0.5593447785736297, PriceNoAfter: 0.4904840617860577,
		Time: time.Now(), MarketSeq: 1}
	stored, answer := storeTrade(&r, true), encodeAnswer(tradeAnswer(&r))
	t.Logf("a trade's answer: %d bytes of JSON, %d stored", len(answer), len(stored))
	if len(stored) >= len(answer)/3 {
		t.Errorf("stored %d bytes for an answer of %d", len(stored), len(answer))
	}
}
