package wire

import (
	"github.com/google/uuid"

	"marketd/core/money"
)

// TradeFields are what every view of a trade starts with: the answer to
// the trade, the caller's fills (GET /api/trades) and a profile's recent
// trades.
type TradeFields struct {
	TradeID  uuid.UUID    `json:"trade_id"`
	MarketID uuid.UUID    `json:"market_id"`
	Side     string       `json:"side"`
	Type     string       `json:"type"` // buy or sell
	Currency string       `json:"currency"`
	Shares   money.Amount `json:"shares"`
	Cost     money.Amount `json:"cost"`
}

// Trade is the answer of POST /api/markets/trade, and an item of the
// results of POST /api/markets/trades.
type Trade struct {
	TradeFields
	Vig           money.Amount `json:"vig"`
	BalanceAfter  money.Amount `json:"balance_after"`
	PriceYesAfter float64      `json:"price_yes_after"`
	PriceNoAfter  float64      `json:"price_no_after"`
	CreatedAt     Timestamp    `json:"created_at"`
	MarketSeq     uint64       `json:"market_seq"`
}

// Fill is one of the caller's trades (GET /api/trades).
type Fill struct {
	TradeFields
	Vig       money.Amount `json:"vig"`
	CreatedAt Timestamp    `json:"created_at"`
}

// FillList is a page of the caller's trades, newest first.
type FillList struct {
	Count  int    `json:"count"`
	Limit  int    `json:"limit"`
	Offset int    `json:"offset"`
	Trades []Fill `json:"trades"`
}

// TradeSummary is one of a profile's or a portfolio's recent trades.
type TradeSummary struct {
	TradeFields
	Reasoning string    `json:"reasoning"`
	CreatedAt Timestamp `json:"created_at"`
}

// SplitMerge answers a split or merge, priced on the curve like a trade
// (docs/API.md, "Split and merge"): cost is paid on a split and received
// on a merge.
type SplitMerge struct {
	MarketID      uuid.UUID    `json:"market_id"`
	Type          string       `json:"type"` // split or merge
	Currency      string       `json:"currency"`
	Amount        money.Amount `json:"amount"`
	Cost          money.Amount `json:"cost"`
	Vig           money.Amount `json:"vig"`
	BalanceAfter  money.Amount `json:"balance_after"`
	YesShares     money.Amount `json:"yes_shares"`
	NoShares      money.Amount `json:"no_shares"`
	PriceYesAfter float64      `json:"price_yes_after"`
	PriceNoAfter  float64      `json:"price_no_after"`
	MarketSeq     uint64       `json:"market_seq"`
}
