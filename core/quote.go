package core

import (
	"math"

	"github.com/google/uuid"

	"marketd/core/money"
	"marketd/core/pricing"
)

// Quote is what a trade, a split or a merge would do at this moment,
// without doing it (docs/API.md, "Binding quotes").
type Quote struct {
	Market   uuid.UUID
	Currency money.Currency
	// Cost is what a buy or a split pays, or what a sell or a merge
	// receives, rounded as the operation rounds it; Vig is a trade's part
	// of it.
	Cost          money.Amount
	Vig           money.Amount
	PriceYesAfter float64
	PriceNoAfter  float64
	// MarketSeq is the book's market_seq the quote was computed at: a trade
	// sent with it as expect_seq costs exactly Cost, or is refused with
	// ErrMarketMoved.
	MarketSeq uint64
}

// QuoteTrade prices a trade on the market's published view, by the same
// functions and in the same order of checks as the trade, except those of
// the caller's account (balance, shares held): a quote is of the market.
// It never waits for the market's goroutine.
func (e *Engine) QuoteTrade(req TradeRequest) (Quote, error) {
	if err := req.validate(); err != nil {
		return Quote{}, err
	}
	return e.quote(req.Market, req.Currency, func(info *MarketInfo, book *Book) (pricing.Quote, error) {
		var pos Position
		pos.Shares[req.Side] = req.Shares
		var q pricing.Quote
		err := quoteTrade(&q, nil, info, &req, book, &pos, money.Amount(math.MaxInt64))
		return q, err
	})
}

// QuoteSplit quotes a split or a merge on the curve, as QuoteTrade quotes
// a trade.
func (e *Engine) QuoteSplit(req SplitRequest) (Quote, error) {
	if err := req.validate(); err != nil {
		return Quote{}, err
	}
	return e.quote(req.Market, req.Currency, func(info *MarketInfo, book *Book) (pricing.Quote, error) {
		var pos Position
		pos.Shares = [NumSides]money.Amount{req.Amount, req.Amount}
		q, err := quoteSplit(info, &req, book, &pos, money.Amount(math.MaxInt64))
		return q.Quote, err
	})
}

// quote prices an operation on a tradable market's published book in cur:
// price is the operation's own quote, given a position holding what it
// needs and an unbounded balance, so that only the market's checks apply.
func (e *Engine) quote(id uuid.UUID, cur money.Currency, price func(*MarketInfo, *Book) (pricing.Quote, error)) (Quote, error) {
	v, book, err := e.quotedBook(id, cur)
	if err != nil {
		return Quote{}, err
	}
	q, err := price(v.Info, &book)
	if err != nil {
		return Quote{}, err
	}
	return Quote{Market: v.ID, Currency: cur, Cost: q.Amount, Vig: q.Vig,
		PriceYesAfter: q.PricesAfter[0], PriceNoAfter: q.PricesAfter[1], MarketSeq: book.MarketSeq()}, nil
}

// quotedBook returns a tradable market's view and its book in a currency,
// as the book's first operation would open it when it is not open yet.
func (e *Engine) quotedBook(id uuid.UUID, cur money.Currency) (*MarketView, Book, error) {
	m := e.st.market(id)
	if m == nil {
		return nil, Book{}, ErrMarketNotFound
	}
	v := m.freshView()
	if v.StatusAt(e.now()) != StatusActive {
		return nil, Book{}, ErrMarketNotActive
	}
	book := v.Books[cur]
	if !v.Open[cur] {
		book = Book{Currency: cur, Q: [NumSides]money.Amount{v.Info.Q0, v.Info.Q0}}
	}
	return v, book, nil
}
