package core

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"marketd/core/money"
	"marketd/core/pricing"
)

// TradeRequest is a buy or a sell of shares of one side of a market.
type TradeRequest struct {
	Account  uuid.UUID
	Market   uuid.UUID
	Currency money.Currency
	// TradingMode, when set, trades in the account's trading mode as the
	// trade is submitted instead of Currency (docs/API.md, "POST
	// /api/profile/trading-mode"), read with the account the trade looks
	// up anyway: Engine.TradingMode before it was a second lookup.
	TradingMode bool
	Side        Side
	Sell        bool
	Shares      money.Amount
	// Limit, when HasLimit, is the most a buy may cost (max_cost) or the
	// least a sell must pay (min_proceeds).
	Limit     money.Amount
	HasLimit  bool
	Reasoning string
	// ExpectSeq, when HasExpectSeq, is the market_seq the caller priced
	// the trade at (a quote's): when the book has moved since, the trade is
	// refused with ErrMarketMoved.
	ExpectSeq    uint64
	HasExpectSeq bool
	// Idem, when not nil, makes the trade the answer to an idempotent
	// request: Answer encodes the result, on the market's goroutine, into
	// the bytes its record stores (idempotency.go).
	Idem   Idempotent // Key "": none
	Answer func(*TradeResult) []byte
}

// TradeResult is the outcome of a trade.
type TradeResult struct {
	TradeID       uuid.UUID
	Market        uuid.UUID
	Currency      money.Currency
	Side          Side
	Sell          bool
	Shares        money.Amount
	Cost          money.Amount // paid on a buy, received on a sell
	Vig           money.Amount
	BalanceAfter  money.Amount
	PriceYesAfter float64
	PriceNoAfter  float64
	Time          time.Time
	// MarketSeq is the book's market_seq after the trade (MarketSeq).
	MarketSeq uint64
}

func (r *TradeRequest) validate() error {
	switch {
	case !r.Currency.Valid():
		return fieldErr("currency", "unknown currency")
	case r.Side != Yes && r.Side != No:
		return fieldErr("side", "must be yes or no")
	case r.Shares <= 0:
		return fieldErr("shares", "must be positive")
	case r.Shares > MaxAmount:
		return fieldErr("shares", "must be at most 1e9")
	case r.HasLimit && r.Limit < 0:
		return fieldErr(limitField(r.Sell), "must not be negative")
	case len(r.Reasoning) > MaxReasoningRunes && utf8.RuneCountInString(r.Reasoning) > MaxReasoningRunes:
		// A string has no more runes than bytes: most reasonings are
		// shorter in bytes than the limit in runes, and are not counted.
		return fieldErr("reasoning", "must be at most %d characters", MaxReasoningRunes)
	case r.Idem.Key != "" && r.Answer == nil:
		panic("BUG: an idempotent trade without an answer encoder")
	}
	return nil
}

// limitField names the request field of an operation's limit: the least
// that a sell or a merge must pay the trader (paid), else the most that a
// buy or a split may cost.
func limitField(paid bool) string {
	if paid {
		return "min_proceeds"
	}
	return "max_cost"
}

// Trade buys or sells shares for an account, answering once the trade is
// durable. Checks run in the order of docs/API.md, "POST /api/markets/trade"
// and a failed one changes nothing.
func (e *Engine) Trade(ctx context.Context, req TradeRequest) (res TradeResult, err error) {
	err = e.TradeInto(ctx, &req, &res)
	return res, err
}

// TradeInto is Trade with the request read through req and the result
// written to *res, only when err is nil; req is not kept once it returns.
// Both are about 160 bytes: passed and returned by value, each is copied
// once more between the caller's frame and Trade's, on the caller's side
// of every trade (docs/PERFORMANCE.md, "The actor's trade path: the
// record's runs of amounts, and what did not pay"). Transport's trade
// handler calls it.
func (e *Engine) TradeInto(ctx context.Context, req *TradeRequest, res *TradeResult) error {
	c := e.getCommand(opTrade)
	c.trade = *req
	var mode *money.Currency
	if req.TradingMode {
		mode = &c.trade.Currency
	}
	// The result is copied once, into *res, and only when there is one.
	err := e.submitBookChange(ctx, c, req.validate(), req.Market, req.Account, mode)
	if err == nil {
		*res = c.tradeRes
	}
	e.putCommand(c)
	return err
}

// marketAndTrader finds the market and the account of a trade, a split or
// a merge; the house does not trade.
func (e *Engine) marketAndTrader(marketID, accountID uuid.UUID) (*market, *account, error) {
	m := e.st.market(marketID)
	if m == nil {
		return nil, nil, ErrMarketNotFound
	}
	a := e.st.account(accountID)
	if a == nil || accountID == HouseID {
		return nil, nil, ErrAccountNotFound
	}
	return m, a, nil
}

// tradable reports whether the market takes trades, splits and merges at
// nowNanos: active and before its closing time, whether or not the close
// is logged yet. Runs on the market's goroutine.
func (m *market) tradable(nowNanos int64) bool {
	return m.info.Status == StatusActive && nowNanos < m.info.ClosesAt
}

// lockTrader locks a trading account and, when the currency's book is not
// open yet, the house that funds it (returned, else nil), in the lock
// order; unlockTrader undoes it. (A returned unlock closure cost an
// allocation per trade.) Runs on the market's goroutine.
func (e *Engine) lockTrader(m *market, a *account, cur money.Currency) (house *account) {
	if m.open[cur] {
		a.mu.Lock()
		return nil
	}
	house = e.st.account(HouseID)
	lockAccounts(a, house)
	return house
}

// unlockTrader releases what lockTrader locked.
func unlockTrader(a, house *account) {
	a.mu.Unlock()
	if house != nil && house != a {
		house.mu.Unlock()
	}
}

// MarketSeq returns the market_seq of a book: its state version, which
// moves exactly when its q does (docs/API.md, "Binding quotes"). Every
// change of Q counts in Seq: applyTrade and applySplit.
func (b *Book) MarketSeq() uint64 { return b.Seq }

// checkExpectSeq refuses an operation priced at another market_seq than
// the book's. Runs on the market's goroutine.
func (m *market) checkExpectSeq(cur money.Currency, has bool, seq uint64) error {
	if has && m.books[cur].MarketSeq() != seq {
		return ErrMarketMoved
	}
	return nil
}

// quoteTrade prices a trade into *q and runs its checks in the order of
// docs/API.md, "POST /api/markets/trade": shares, liquidity, the 1e10
// limit, slippage, balance. memo is the book's own on its market's
// goroutine, nil elsewhere. The quote is written where the caller keeps
// it, not returned: see pricing.Memo.QuoteBuy.
func quoteTrade(q *pricing.Quote, memo *pricing.Memo, info *MarketInfo, r *TradeRequest, book *Book, pos *Position, balance money.Amount) error {
	side := int(r.Side)
	if r.Sell {
		switch {
		case pos.Shares[side] < r.Shares:
			return ErrInsufficientShares
		case book.Q[side]-r.Shares < info.Q0:
			return ErrInsufficientLiquidity
		}
		if err := memo.QuoteSell(q, info.Alpha, book.Q, side, r.Shares); err != nil {
			return fmt.Errorf("core: sell proceeds: %w", err)
		}
		if r.HasLimit && q.Amount < r.Limit {
			return ErrSlippage
		}
		return nil
	}
	err := memo.QuoteBuy(q, info.Alpha, book.Q, side, r.Shares)
	switch {
	case errors.Is(err, pricing.ErrLiquidityLimit):
		return ErrLiquidityLimit
	case err != nil:
		return fmt.Errorf("core: buy cost: %w", err)
	case r.HasLimit && q.Amount > r.Limit:
		return ErrSlippage
	case balance < q.Amount:
		return ErrInsufficientBalance
	}
	return nil
}

// applyTrade computes the after-values of a quoted trade: the book, the
// position (a sell takes the cost basis down pro rata) and the returned
// balance. Volume is a statistic: it saturates rather than refuse a trade.
func applyTrade(r *TradeRequest, q *pricing.Quote, book *Book, pos *Position, balance money.Amount, s *sums) money.Amount {
	side := int(r.Side)
	cost, vig := q.Amount, q.Vig
	if r.Sell {
		basisOut := pos.Cost[side]
		if r.Shares < pos.Shares[side] {
			basisOut = s.share(pos.Cost[side], r.Shares, pos.Shares[side])
		}
		pos.Cost[side] = s.sub(pos.Cost[side], basisOut)
		pos.Shares[side] = s.sub(pos.Shares[side], r.Shares)
		pos.PaidOut = s.add(pos.PaidOut, cost)
		balance = s.add(balance, cost)
		book.Q[side] = s.sub(book.Q[side], r.Shares)
		book.Collateral = s.sub(book.Collateral, cost)
	} else {
		pos.Cost[side] = s.add(pos.Cost[side], cost)
		pos.Shares[side] = s.add(pos.Shares[side], r.Shares)
		pos.PaidIn = s.add(pos.PaidIn, cost)
		balance = s.sub(balance, cost)
		book.Q[side] = s.add(book.Q[side], r.Shares)
		book.Collateral = s.add(book.Collateral, cost)
	}
	accrueVig(vig, book, pos, s)
	book.Volume = addSigned(book.Volume, cost)
	book.Trades++
	book.Seq++
	return balance
}

// accrueVig accrues the vig of a trade, split or merge: 30% to the
// market's creator, 20% to the position's referrer if any, the rest to the
// house (docs/ARCHITECTURE.md, "Money and the house").
func accrueVig(vig money.Amount, book *Book, pos *Position, s *sums) {
	creatorVig := vig * 3 / 10
	var refVig money.Amount
	if pos.Referrer != uuid.Nil {
		refVig = vig * 2 / 10
	}
	pos.RefVig = s.add(pos.RefVig, refVig)
	book.VigTotal = s.add(book.VigTotal, vig)
	book.VigCreator = s.add(book.VigCreator, creatorVig)
	book.VigHouse = s.add(book.VigHouse, vig-creatorVig-refVig)
}
