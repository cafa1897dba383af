package core

import (
	"fmt"
	"unsafe"

	"github.com/google/uuid"

	"marketd/core/money"
)

// fill is a trade as an account's fills keep it: a TradeSummary without
// its reasoning (only the recent trades keep one, in accountMore.reasons), in
// 64 bytes. A trade appends one fill to an account that 1,023 other trades
// have pushed out of the cache since it last traded, so every line the
// fill touches is a miss: the 88-byte TradeSummary, eight to a run of
// eleven lines, touched two or three lines a trade; a fill, whose
// chunkList arrays are line-aligned (their sizes are powers of two), one
// (docs/PERFORMANCE.md, "The account's cold lines").
type fill struct {
	id, market uuid.UUID
	// sharesKind is the shares in its low fillSharesBits bits, and above
	// them the currency (4 bits), the side (bit 60) and whether the trade
	// sold (bit 61). A trade's shares are at most MaxAmount, far below.
	sharesKind uint64
	cost, vig  money.Amount
	time       int64
}

// fillSharesBits is the bits of fill.sharesKind that hold the shares.
const fillSharesBits = 56

// fillCurrencyBits is the bits above the shares that hold the currency.
const fillCurrencyBits = 4

// fillable reports why t cannot be kept as a fill, or nil: its shares are
// negative or need more than fillSharesBits bits, or its currency or side
// is unknown. No trade is refused for it (shares are at most MaxAmount);
// recovery checks what it read before applying it (checkStorable).
func fillable(t *TradeSummary) error {
	switch {
	case t.Shares < 0 || t.Shares >= 1<<fillSharesBits:
		return fmt.Errorf("trade %s: shares %d out of range", t.ID, t.Shares)
	case !t.Currency.Valid():
		return fmt.Errorf("trade %s: unknown currency %d", t.ID, t.Currency)
	case t.Side != Yes && t.Side != No:
		return fmt.Errorf("trade %s: unknown side %d", t.ID, t.Side)
	}
	return nil
}

// makeFill returns t as a fill; t must be fillable. It checks that with
// three compares (a valid currency fits its bits: see below), and
// asks fillable why only when one fails.
func makeFill(t *TradeSummary) fill {
	if uint64(t.Shares) >= 1<<fillSharesBits || !t.Currency.Valid() || t.Side > No {
		panic(fmt.Sprintf("BUG: core: a trade that cannot be kept: %v", fillable(t)))
	}
	kind := uint64(t.Currency) | uint64(t.Side)<<fillCurrencyBits
	if t.Sell {
		kind |= 1 << (fillCurrencyBits + 1)
	}
	return fill{id: t.ID, market: t.Market, sharesKind: uint64(t.Shares) | kind<<fillSharesBits,
		cost: t.Cost, vig: t.Vig, time: t.Time}
}

// A valid currency fits fillCurrencyBits bits: this does not compile
// otherwise.
const _ = uint(1<<fillCurrencyBits - money.NumCurrencies)

// value returns the fill as a TradeSummary without reasoning.
func (f fill) value() TradeSummary {
	kind := f.sharesKind >> fillSharesBits
	return TradeSummary{
		ID:       f.id,
		Market:   f.market,
		Currency: money.Currency(kind & (1<<fillCurrencyBits - 1)),
		Side:     Side(kind >> fillCurrencyBits & 1),
		Sell:     kind>>(fillCurrencyBits+1)&1 == 1,
		Shares:   money.Amount(f.sharesKind & (1<<fillSharesBits - 1)),
		Cost:     f.cost,
		Vig:      f.vig,
		Time:     f.time,
	}
}

// ledgerSlot is a ledger entry as an account's ledgers keep it: padded
// from 56 to 64 bytes, so that each entry is one line of its line-aligned
// array. At 56 bytes, six of every eight entries straddled two lines, and
// a trade appending one to a cold ledger touched 1.75 lines on average
// (docs/PERFORMANCE.md, "The account's cold lines").
type ledgerSlot struct {
	LedgerEntry
	_ [cacheLineBytes - unsafe.Sizeof(LedgerEntry{})]byte
}

// value returns the entry.
func (s ledgerSlot) value() LedgerEntry { return s.LedgerEntry }
