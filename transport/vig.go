package transport

import (
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/core/money"
	"marketd/transport/wire"
)

type vigEntryJSON struct {
	MarketID uuid.UUID       `json:"market_id"`
	Currency string          `json:"currency"`
	Role     string          `json:"role"`
	Accrued  money.Amount    `json:"accrued"`
	Paid     money.Amount    `json:"paid"`
	PaidAt   *wire.Timestamp `json:"paid_at"`
}

type vigJSON struct {
	Currency      string         `json:"currency"`
	Total         money.Amount   `json:"total"`
	Accrued       money.Amount   `json:"accrued"`
	FromMarkets   money.Amount   `json:"from_markets"`
	FromReferrals money.Amount   `json:"from_referrals"`
	Entries       []vigEntryJSON `json:"entries"`
}

// vig answers GET /api/vig (docs/API.md, "GET /api/vig") for ?currency=, kp
// by default.
func (s *Server) vig(ctx *fasthttp.RequestCtx, c *caller) error {
	cur := money.KP
	if v := ctx.QueryArgs().Peek("currency"); v != nil {
		var ok bool
		if cur, ok = money.ParseCurrency(string(v)); !ok {
			return fieldError("currency", "must be kp or usdc")
		}
	}
	r, ok := s.eng.VigReport(c.account, cur)
	if !ok {
		return core.ErrAccountNotFound
	}
	out := vigJSON{Currency: cur.String(), Total: r.Paid, Accrued: r.Accrued, FromMarkets: r.FromMarkets,
		FromReferrals: r.FromReferrals, Entries: make([]vigEntryJSON, 0, len(r.Entries))}
	for _, e := range r.Entries {
		j := vigEntryJSON{MarketID: e.Market, Currency: e.Currency.String(), Role: e.Role.String(),
			Accrued: e.Accrued, Paid: e.Paid}
		if e.Settled {
			t := wire.Timestamp(e.Time)
			j.PaidAt = &t
		}
		out.Entries = append(out.Entries, j)
	}
	return writeJSON(ctx, fasthttp.StatusOK, out)
}
