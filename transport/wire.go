package transport

import (
	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
)

// The JSON shapes of responses (docs/API.md, "Conventions" and each
// endpoint's section). Field names
// are snake_case; money is money.Amount (exact, at most 6 decimals);
// prices, multipliers and alpha are float64 at full precision.

type sidePair struct {
	Yes float64 `json:"yes"`
	No  float64 `json:"no"`
}

type liquidityJSON struct {
	Alpha float64      `json:"alpha"`
	QYes  money.Amount `json:"q_yes"`
	QNo   money.Amount `json:"q_no"`
}

// bookJSON is one currency's pricing state of a market.
type bookJSON struct {
	Prices      sidePair      `json:"prices"`
	Multipliers sidePair      `json:"multipliers"`
	Liquidity   liquidityJSON `json:"liquidity"`
	Volume      money.Amount  `json:"volume"`
	// MarketSeq is the book's state version (core.Book.MarketSeq): a
	// trade may send it as expect_seq.
	MarketSeq uint64 `json:"market_seq"`
}

type marketJSON struct {
	ID          uuid.UUID     `json:"id"`
	Title       string        `json:"title"`
	Description string        `json:"description"`
	Category    string        `json:"category"`
	Prices      sidePair      `json:"prices"`
	Multipliers sidePair      `json:"multipliers"`
	Liquidity   liquidityJSON `json:"liquidity"`
	ClosesAt    timestamp     `json:"closes_at"`
	CreatedAt   timestamp     `json:"created_at"`
	Status      string        `json:"status"`
	Outcome     *string       `json:"outcome"`
	Volume      money.Amount  `json:"volume"`
	ResolvedAt  *timestamp    `json:"resolved_at"`
	CreatorID   uuid.UUID     `json:"creator_id"`
	MarketSeq   uint64        `json:"market_seq"`
	USDC        *bookJSON     `json:"usdc,omitempty"`
}

func book(v *core.MarketView, c money.Currency) bookJSON {
	yes, no := v.Prices(c)
	b := &v.Books[c]
	q := b.Q
	if !v.Open[c] {
		q = [core.NumSides]money.Amount{v.Info.Q0, v.Info.Q0}
	}
	return bookJSON{
		Prices:      sidePair{yes, no},
		Multipliers: sidePair{1 / yes, 1 / no},
		Liquidity:   liquidityJSON{Alpha: v.Info.Alpha, QYes: q[core.Yes], QNo: q[core.No]},
		Volume:      b.Volume,
		MarketSeq:   b.MarketSeq(),
	}
}

// marketOf renders a market as seen at nowNanos: an active market past its
// closing time shows as closed before its close is logged.
func marketOf(v *core.MarketView, nowNanos int64) marketJSON {
	kp := book(v, money.KP)
	m := marketJSON{
		ID:          v.ID,
		Title:       v.Info.Title,
		Description: v.Info.Description,
		Category:    v.Info.Category,
		Prices:      kp.Prices,
		Multipliers: kp.Multipliers,
		Liquidity:   kp.Liquidity,
		ClosesAt:    timestamp(v.Info.ClosesAt),
		CreatedAt:   timestamp(v.Info.CreatedAt),
		Status:      v.StatusAt(nowNanos).String(),
		Volume:      kp.Volume,
		ResolvedAt:  optionalTime(v.Info.ResolvedAt),
		CreatorID:   v.Info.Creator,
		MarketSeq:   kp.MarketSeq,
	}
	if v.Info.Status == core.StatusResolved {
		o := v.Info.Outcome.String()
		m.Outcome = &o
	}
	if v.Open[money.USDC] {
		u := book(v, money.USDC)
		m.USDC = &u
	}
	return m
}

type marketList struct {
	Count   int          `json:"count"`
	Markets []marketJSON `json:"markets"`
}

// agentJSON is an account as its owner sees it: balance is always KP
// (docs/API.md, "The agent object"); the optional profile fields are null when
// unset.
type agentJSON struct {
	ID            uuid.UUID    `json:"id"`
	Name          string       `json:"name"`
	Role          string       `json:"role"`
	Balance       money.Amount `json:"balance"`
	USDCBalance   money.Amount `json:"usdc_balance"`
	TradingMode   string       `json:"trading_mode"`
	WalletAddress *string      `json:"wallet_address"`
	Persona       string       `json:"persona"`
	TOSVersion    *string      `json:"tos_version"`
	TOSAcceptedAt *timestamp   `json:"tos_accepted_at"`
	MemberSince   timestamp    `json:"member_since"`
}

func agentOf(a *core.AccountView) agentJSON {
	return agentJSON{
		ID:            a.ID,
		Name:          a.Info.Name,
		Role:          a.Info.Role.String(),
		Balance:       a.Balances[money.KP],
		USDCBalance:   a.Balances[money.USDC],
		TradingMode:   a.Info.Mode.String(),
		WalletAddress: optionalString(a.Info.Wallet),
		Persona:       a.Info.Persona,
		TOSVersion:    optionalString(a.Info.TOSVersion),
		TOSAcceptedAt: optionalTime(a.Info.TOSAcceptedAt),
		MemberSince:   timestamp(a.Info.CreatedAt),
	}
}

// optionalString is a string that is null when empty (no wallet, no terms
// accepted).
func optionalString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

type positionJSON struct {
	MarketID uuid.UUID    `json:"market_id"`
	Side     string       `json:"side"`
	Currency string       `json:"currency"`
	Shares   money.Amount `json:"shares"`
	Cost     money.Amount `json:"cost"`
	AvgPrice float64      `json:"avg_price"`

	cur  money.Currency // Currency, for the handlers' sums and prices
	side core.Side      // Side, likewise
}

// positionsOf lists an account's open positions: one item per market,
// currency and side with shares held.
func positionsOf(a *core.AccountView) []positionJSON {
	out := []positionJSON{}
	for _, p := range a.Positions {
		for side := core.Side(0); side < core.NumSides; side++ {
			if p.Closed || p.Shares[side] <= 0 {
				continue
			}
			out = append(out, positionJSON{
				MarketID: p.Market,
				Side:     side.String(),
				Currency: p.Currency.String(),
				Shares:   p.Shares[side],
				Cost:     p.Cost[side],
				AvgPrice: p.Cost[side].Float() / p.Shares[side].Float(),
				cur:      p.Currency,
				side:     side,
			})
		}
	}
	return out
}

type tradeSummaryJSON struct {
	TradeID   uuid.UUID    `json:"trade_id"`
	MarketID  uuid.UUID    `json:"market_id"`
	Side      string       `json:"side"`
	Type      string       `json:"type"`
	Currency  string       `json:"currency"`
	Shares    money.Amount `json:"shares"`
	Cost      money.Amount `json:"cost"`
	Reasoning string       `json:"reasoning"`
	CreatedAt timestamp    `json:"created_at"`
}

func tradesOf(a *core.AccountView) []tradeSummaryJSON {
	out := make([]tradeSummaryJSON, 0, len(a.Trades))
	for _, t := range a.Trades {
		out = append(out, tradeSummaryJSON{
			TradeID:   t.ID,
			MarketID:  t.Market,
			Side:      t.Side.String(),
			Type:      tradeType(t.Sell),
			Currency:  t.Currency.String(),
			Shares:    t.Shares,
			Cost:      t.Cost,
			Reasoning: t.Reasoning,
			CreatedAt: timestamp(t.Time),
		})
	}
	return out
}

func tradeType(sell bool) string {
	if sell {
		return "sell"
	}
	return "buy"
}
