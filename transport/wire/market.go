package wire

import (
	"github.com/google/uuid"

	"marketd/core/money"
)

// SidePair is a value per side of a market.
type SidePair struct {
	Yes float64 `json:"yes"`
	No  float64 `json:"no"`
}

// Liquidity is a book's curve: its alpha and share quantities.
type Liquidity struct {
	Alpha float64      `json:"alpha"`
	QYes  money.Amount `json:"q_yes"`
	QNo   money.Amount `json:"q_no"`
}

// Book is one currency's pricing state of a market.
type Book struct {
	Prices      SidePair     `json:"prices"`
	Multipliers SidePair     `json:"multipliers"`
	Liquidity   Liquidity    `json:"liquidity"`
	Volume      money.Amount `json:"volume"`
	// MarketSeq is the book's state version (core.Book.MarketSeq): a
	// trade may send it as expect_seq.
	MarketSeq uint64 `json:"market_seq"`
}

// Market is the market object (docs/API.md, "GET /api/markets"): its KP
// book's fields inline, its USDC book when that is open.
type Market struct {
	ID          uuid.UUID    `json:"id"`
	Title       string       `json:"title"`
	Description string       `json:"description"`
	Category    string       `json:"category"`
	Prices      SidePair     `json:"prices"`
	Multipliers SidePair     `json:"multipliers"`
	Liquidity   Liquidity    `json:"liquidity"`
	ClosesAt    Timestamp    `json:"closes_at"`
	CreatedAt   Timestamp    `json:"created_at"`
	Status      string       `json:"status"`
	Outcome     *string      `json:"outcome"`
	Volume      money.Amount `json:"volume"`
	ResolvedAt  *Timestamp   `json:"resolved_at"`
	CreatorID   uuid.UUID    `json:"creator_id"`
	MarketSeq   uint64       `json:"market_seq"`
	USDC        *Book        `json:"usdc,omitempty"`
}

// MarketList is a page of markets; Count is how many matched.
type MarketList struct {
	Count   int      `json:"count"`
	Markets []Market `json:"markets"`
}
