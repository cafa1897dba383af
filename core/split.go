package core

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/google/uuid"

	"marketd/core/money"
	"marketd/core/pricing"
)

// SplitRequest sells complete sets (n yes and n no shares) on the
// market's curve (split) or buys them back (merge), docs/API.md, "POST
// /api/markets/split-merge":
// a split of n costs C(q + n(1,1)) - C(q), rounded up, and a merge pays
// C(q) - C(q - n(1,1)), rounded down, as trades do.
type SplitRequest struct {
	Account  uuid.UUID
	Market   uuid.UUID
	Currency money.Currency
	Merge    bool
	Amount   money.Amount
	// Limit, when HasLimit, is the most a split may cost (max_cost) or the
	// least a merge must pay (min_proceeds).
	Limit    money.Amount
	HasLimit bool
	// TradingMode, ExpectSeq, Idem and Answer are a trade's (TradeRequest).
	TradingMode  bool
	ExpectSeq    uint64
	HasExpectSeq bool
	Idem         Idempotent // Key "": none
	Answer       func(*SplitResult) []byte
}

// SplitResult is the outcome of a split or a merge.
type SplitResult struct {
	Market        uuid.UUID
	Currency      money.Currency
	Merge         bool
	Amount        money.Amount
	Cost          money.Amount // paid on a split, received on a merge
	Vig           money.Amount
	BalanceAfter  money.Amount
	YesShares     money.Amount // held after
	NoShares      money.Amount
	PriceYesAfter float64
	PriceNoAfter  float64
	MarketSeq     uint64 // the book's market_seq after the split or merge
}

func (r *SplitRequest) validate() error {
	switch {
	case !r.Currency.Valid():
		return fieldErr("currency", "unknown currency")
	case r.Amount <= 0:
		return fieldErr("amount", "must be positive")
	case r.Amount > MaxAmount:
		return fieldErr("amount", "must be at most 1e9")
	case r.HasLimit && r.Limit < 0:
		return fieldErr(limitField(r.Merge), "must not be negative")
	case r.Idem.Key != "" && r.Answer == nil:
		panic("BUG: an idempotent split or merge without an answer encoder")
	}
	return nil
}

// SplitMerge splits or merges for an account, answering once durable.
func (e *Engine) SplitMerge(ctx context.Context, req SplitRequest) (SplitResult, error) {
	c := e.getCommand(opSplitMerge)
	c.split = req
	var mode *money.Currency
	if req.TradingMode {
		mode = &c.split.Currency
	}
	err := e.submitBookChange(ctx, c, req.validate(), req.Market, req.Account, mode)
	res := c.splitRes
	e.putCommand(c)
	if err != nil {
		return SplitResult{}, err
	}
	return res, nil
}

// setQuote is a priced split or merge: the curve's quote for the sets that
// move q, and, for a merge, the sets merged at par first (par).
type setQuote struct {
	pricing.Quote
	par money.Amount
}

// quoteSplit prices a split or merge and runs its checks in the trade's order
// (docs/API.md, "POST /api/markets/split-merge"): shares, liquidity, the 1e10
// limit, slippage, balance.
//
// Sets split at par before splits moved to the curve are held outside q
// (book.Splits > 0); a merge takes them first, at par, so that a data
// directory of that time keeps every balance and position and the market
// still owes exactly what is held (docs/API.md, "POST
// /api/markets/split-merge"). A par merge
// pays 1 a set, never more than the curve would, so it opens no profit.
func quoteSplit(info *MarketInfo, r *SplitRequest, book *Book, pos *Position, balance money.Amount) (setQuote, error) {
	n := r.Amount
	if r.Merge {
		if pos.Shares[Yes] < n || pos.Shares[No] < n {
			return setQuote{}, ErrInsufficientShares
		}
		par := min(n, max(0, book.Splits))
		curveSets := n - par
		if book.Q[Yes]-curveSets < info.Q0 || book.Q[No]-curveSets < info.Q0 {
			return setQuote{}, ErrInsufficientLiquidity
		}
		q := setQuote{par: par}
		if curveSets > 0 {
			var err error
			if q.Quote, err = pricing.QuoteMerge(info.Alpha, book.Q, curveSets); err != nil {
				return q, fmt.Errorf("core: merge proceeds: %w", err)
			}
		} else {
			q.QAfter = book.Q
			q.PricesAfter[0], q.PricesAfter[1] = pricing.Prices(info.Alpha, book.Q)
		}
		q.Amount += par // at most 2e9 units: no overflow
		if r.HasLimit && q.Amount < r.Limit {
			return q, ErrSlippage
		}
		return q, nil
	}
	if book.Q[Yes] > pricing.MaxQ-n || book.Q[No] > pricing.MaxQ-n {
		return setQuote{}, ErrLiquidityLimit
	}
	pq, err := pricing.QuoteSplit(info.Alpha, book.Q, n)
	q := setQuote{Quote: pq}
	switch {
	case errors.Is(err, pricing.ErrLiquidityLimit):
		return q, ErrLiquidityLimit
	case err != nil:
		return q, fmt.Errorf("core: split cost: %w", err)
	case r.HasLimit && q.Amount > r.Limit:
		return q, ErrSlippage
	case balance < q.Amount:
		return q, ErrInsufficientBalance
	}
	return q, nil
}

// applySplit computes the after-values of a quoted split or merge: the
// book, the position and the returned balance. A split's cost basis goes
// to each side in proportion to its price after the split; a merge takes
// each side's basis down pro rata. Its vig accrues as a trade's
// (docs/API.md, "POST /api/markets/split-merge").
func applySplit(r *SplitRequest, q setQuote, book *Book, pos *Position, balance money.Amount, s *sums) money.Amount {
	n := r.Amount
	if r.Merge {
		for side := range NumSides {
			out := pos.Cost[side]
			if n < pos.Shares[side] {
				out = s.share(pos.Cost[side], n, pos.Shares[side])
			}
			pos.Cost[side] = s.sub(pos.Cost[side], out)
			pos.Shares[side] = s.sub(pos.Shares[side], n)
		}
		pos.PaidOut = s.add(pos.PaidOut, q.Amount)
		balance = s.add(balance, q.Amount)
		book.Collateral = s.sub(book.Collateral, q.Amount)
		book.Splits = s.sub(book.Splits, q.par)
	} else {
		yesCost := costShare(q.Amount, q.PricesAfter)
		pos.Cost[Yes] = s.add(pos.Cost[Yes], yesCost)
		pos.Cost[No] = s.add(pos.Cost[No], q.Amount-yesCost)
		pos.Shares[Yes] = s.add(pos.Shares[Yes], n)
		pos.Shares[No] = s.add(pos.Shares[No], n)
		pos.PaidIn = s.add(pos.PaidIn, q.Amount)
		balance = s.sub(balance, q.Amount)
		book.Collateral = s.add(book.Collateral, q.Amount)
	}
	if book.Q != q.QAfter {
		book.Seq++
	}
	book.Q = q.QAfter
	accrueVig(q.Vig, book, pos, s)
	return balance
}

// costShare returns the part of a set's cost that goes to the yes side's
// basis: cost * p_yes / (p_yes + p_no), rounded down, in [0, cost].
func costShare(cost money.Amount, prices [2]float64) money.Amount {
	f := prices[0] / (prices[0] + prices[1])
	if !(f >= 0 && f <= 1) { // prices are > 0: a NaN is a broken evaluation
		panic(fmt.Sprintf("BUG: split prices %v", prices))
	}
	return min(cost, max(0, money.Amount(math.Floor(float64(cost)*f))))
}
