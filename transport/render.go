package transport

import (
	"marketd/core"
	"marketd/core/money"
	"marketd/transport/wire"
)

// How core's values become the answers of package wire (docs/API.md,
// "Conventions" and each endpoint's section).

func book(v *core.MarketView, c money.Currency) wire.Book {
	yes, no := v.Prices(c)
	b := &v.Books[c]
	q := b.Q
	if !v.Open[c] {
		q = [core.NumSides]money.Amount{v.Info.Q0, v.Info.Q0}
	}
	return wire.Book{
		Prices:      wire.SidePair{Yes: yes, No: no},
		Multipliers: wire.SidePair{Yes: 1 / yes, No: 1 / no},
		Liquidity:   wire.Liquidity{Alpha: v.Info.Alpha, QYes: q[core.Yes], QNo: q[core.No]},
		Volume:      b.Volume,
		MarketSeq:   b.MarketSeq(),
	}
}

// marketOf renders a market as seen at nowNanos: an active market past its
// closing time shows as closed before its close is logged.
func marketOf(v *core.MarketView, nowNanos int64) wire.Market {
	kp := book(v, money.KP)
	m := wire.Market{
		ID:          v.ID,
		Title:       v.Info.Title,
		Description: v.Info.Description,
		Category:    v.Info.Category,
		Prices:      kp.Prices,
		Multipliers: kp.Multipliers,
		Liquidity:   kp.Liquidity,
		ClosesAt:    wire.Timestamp(v.Info.ClosesAt),
		CreatedAt:   wire.Timestamp(v.Info.CreatedAt),
		Status:      v.StatusAt(nowNanos).String(),
		Volume:      kp.Volume,
		ResolvedAt:  wire.OptionalTime(v.Info.ResolvedAt),
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

func agentOf(a *core.AccountView) wire.Agent {
	return wire.Agent{
		ID:            a.ID,
		Name:          a.Info.Name,
		Role:          a.Info.Role.String(),
		Balance:       a.Balances[money.KP],
		USDCBalance:   a.Balances[money.USDC],
		TradingMode:   a.Info.Mode.String(),
		WalletAddress: optionalString(a.Info.Wallet),
		Persona:       a.Info.Persona,
		TOSVersion:    optionalString(a.Info.TOSVersion),
		TOSAcceptedAt: wire.OptionalTime(a.Info.TOSAcceptedAt),
		MemberSince:   wire.Timestamp(a.Info.CreatedAt),
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

// position is an open position's answer with its currency and side, for
// the handlers' sums and prices; it encodes as its wire.Position.
type position struct {
	wire.Position
	cur  money.Currency
	side core.Side
}

// positionsOf lists an account's open positions: one item per market,
// currency and side with shares held.
func positionsOf(a *core.AccountView) []position {
	out := []position{}
	for _, p := range a.Positions {
		for side := core.Side(0); side < core.NumSides; side++ {
			if p.Closed || p.Shares[side] <= 0 {
				continue
			}
			out = append(out, position{
				Position: wire.Position{
					MarketID: p.Market,
					Side:     side.String(),
					Currency: p.Currency.String(),
					Shares:   p.Shares[side],
					Cost:     p.Cost[side],
					AvgPrice: p.Cost[side].Float() / p.Shares[side].Float(),
				},
				cur:  p.Currency,
				side: side,
			})
		}
	}
	return out
}

func tradesOf(a *core.AccountView) []wire.TradeSummary {
	out := make([]wire.TradeSummary, 0, len(a.Trades))
	for _, t := range a.Trades {
		out = append(out, wire.TradeSummary{TradeFields: tradeFieldsOf(&t), Reasoning: t.Reasoning,
			CreatedAt: wire.Timestamp(t.Time)})
	}
	return out
}

// tradeFieldsOf is what every view of a kept trade starts with.
func tradeFieldsOf(t *core.TradeSummary) wire.TradeFields {
	return wire.TradeFields{TradeID: t.ID, MarketID: t.Market, Side: t.Side.String(), Type: tradeType(t.Sell),
		Currency: t.Currency.String(), Shares: t.Shares, Cost: t.Cost}
}

func tradeType(sell bool) string {
	if sell {
		return "sell"
	}
	return "buy"
}
