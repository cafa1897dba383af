package core

import (
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	"github.com/google/uuid"

	"marketd/core/money"
)

// TestFillKeepsTrade: a fill reads back as the trade it was made of, less
// its reasoning, at the edges of what it holds and for random trades
// (seeded PCG, the seed printed).
func TestFillKeepsTrade(t *testing.T) {
	id, market := uuid.MustParse("7c1e2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"), uuid.MustParse("0b5e7c3a-4f1d-4c8e-9a7b-2d6f8e1c3b5a")
	cases := []TradeSummary{
		{},
		{ID: id, Market: market, Currency: money.KP, Side: Yes, Shares: 1, Cost: 1, Vig: 0, Time: 1},
		{ID: id, Market: market, Currency: money.NumCurrencies - 1, Side: No, Sell: true, Shares: 1<<fillSharesBits - 1,
			Cost: MaxAmount * 10, Vig: -1, Time: -1},
		{ID: id, Market: market, Currency: money.KP, Side: No, Sell: false, Shares: MaxAmount, Cost: 1 << 62, Vig: 1 << 62,
			Time: time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano(), Reasoning: "dropped"},
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	for range 1000 {
		var tr TradeSummary
		for i := range tr.ID {
			tr.ID[i], tr.Market[i] = byte(rng.Uint32()), byte(rng.Uint32())
		}
		tr.Currency, tr.Side, tr.Sell = money.Currency(rng.IntN(int(money.NumCurrencies))), Side(rng.IntN(2)), rng.IntN(2) == 1
		tr.Shares = money.Amount(rng.Int64N(1 << fillSharesBits))
		tr.Cost, tr.Vig, tr.Time = money.Amount(rng.Int64()), money.Amount(rng.Int64()), rng.Int64()
		cases = append(cases, tr)
	}
	for _, tr := range cases {
		if err := fillable(&tr); err != nil {
			t.Fatalf("%+v: %v", tr, err)
		}
		want := tr
		want.Reasoning = ""
		if got := makeFill(&tr).value(); got != want {
			t.Fatalf("fill of %+v reads back as %+v", want, got)
		}
	}
}

// TestFillsAndLedgerEntriesOneLineEach holds what fill.go's comments
// promise: a fill and a ledger slot are 64 bytes, and every array of an
// account's fills and ledger starts on a cache line (the element types
// hold no pointers, so the runtime puts no header before them), so that
// each entry a trade appends is one line.
func TestFillsAndLedgerEntriesOneLineEach(t *testing.T) {
	if s := unsafe.Sizeof(fill{}); s != cacheLineBytes {
		t.Errorf("fill is %d bytes, want %d", s, cacheLineBytes)
	}
	if s := unsafe.Sizeof(ledgerSlot{}); s != cacheLineBytes {
		t.Errorf("ledgerSlot is %d bytes, want %d", s, cacheLineBytes)
	}
	onLine := func(what string, p unsafe.Pointer) {
		t.Helper()
		if uintptr(p)%cacheLineBytes != 0 {
			t.Errorf("%s at %#x: not on a cache line", what, p)
		}
	}
	a := testAccount()
	for i := range 3*listChunkLen + 1 {
		a.appendLedger(&LedgerEntry{Currency: money.KP, Type: TxTradeBuy, Amount: -1, BalanceAfter: money.Amount(-i - 1)})
		a.refs().fills.push(fill{})
		led, fills := a.refs().ledger[money.KP].snapshot(), a.refs().fills.snapshot()
		for _, e := range []unsafe.Pointer{unsafe.Pointer(led.at(i)), unsafe.Pointer(fills.at(i))} {
			onLine("entry", e)
		}
	}
}
