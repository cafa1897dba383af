package transport

import (
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/core/money"
	"marketd/transport/wire"
)

// Paging of the points and USDC ledgers (docs/API.md, "GET /api/points",
// "GET /api/token/balance").
const (
	defaultLedgerLimit = 100
	maxLedgerLimit     = 1000
)

// account returns the caller's account; it exists, since credentials
// only ever name existing accounts.
func (s *Server) account(c *caller) (core.AccountView, error) {
	a, ok := s.eng.Account(c.account)
	if !ok {
		return a, core.ErrAccountNotFound
	}
	return a, nil
}

// statsOf sums the open positions and their cost basis in KP, the
// currency of agent.balance.
func statsOf(ps []position) wire.Stats {
	var st wire.Stats
	for _, p := range ps {
		st.OpenPositions++
		if p.cur == money.KP {
			st.TotalInvested += p.Cost
		}
	}
	return st
}

func (s *Server) me(ctx *fasthttp.RequestCtx, c *caller) error {
	a, err := s.account(c)
	if err != nil {
		return err
	}
	ps := positionsOf(&a)
	out := wire.Profile{
		Agent:        agentOf(&a),
		Auth:         wire.Auth{Method: c.method.String(), Scopes: scopeList(c.scopes)},
		Stats:        statsOf(ps),
		Positions:    make([]wire.Position, len(ps)),
		RecentTrades: tradesOf(&a),
	}
	for i := range ps {
		out.Positions[i] = ps[i].Position
	}
	if c.method == byKey {
		k := &c.key
		out.APIKey = &wire.CallerKey{ID: k.ID, Name: k.Name, Prefix: k.Prefix, Scopes: scopeList(k.Scopes),
			RateLimitTier: k.Tier.String(), TotalRequests: k.TotalRequests, ExpiresAt: wire.OptionalTime(k.ExpiresAt)}
	}
	return writeJSON(ctx, fasthttp.StatusOK, out)
}

func (s *Server) portfolio(ctx *fasthttp.RequestCtx, c *caller) error {
	a, err := s.account(c)
	if err != nil {
		return err
	}
	now := s.now().UnixNano()
	ps := positionsOf(&a)
	out := wire.Portfolio{
		Balance:      a.Balances[money.KP],
		USDCBalance:  a.Balances[money.USDC],
		TradingMode:  a.Info.Mode.String(),
		Positions:    make([]wire.Holding, 0, len(ps)),
		Stats:        wire.PortfolioStats{Stats: statsOf(ps)},
		RecentTrades: tradesOf(&a),
	}
	for _, p := range ps {
		h := wire.Holding{Position: p.Position}
		if v, ok := s.eng.Market(p.MarketID); ok {
			h.Title, h.Status = v.Info.Title, v.StatusAt(now).String()
			yes, no := v.Prices(p.cur)
			h.Price = yes
			if p.side == core.No {
				h.Price = no
			}
			// The value is an estimate at the marginal price, rounded
			// down to micro-units; it is not what a sell would pay.
			h.Value = money.Amount(h.Price * float64(p.Shares))
		}
		if p.cur == money.KP {
			out.Stats.TotalValue += h.Value
		}
		out.Positions = append(out.Positions, h)
	}
	return writeJSON(ctx, fasthttp.StatusOK, out)
}

func (s *Server) points(ctx *fasthttp.RequestCtx, c *caller) error {
	page, a, err := s.ledgerAndAccount(ctx, c, money.KP)
	if err != nil {
		return err
	}
	return writeJSON(ctx, fasthttp.StatusOK, wire.Points{Balance: a.Balances[money.KP], LedgerPage: page})
}

// ledgerAndAccount returns the page of the caller's ledger in cur that the
// query asks for, and the caller's account read after it.
func (s *Server) ledgerAndAccount(ctx *fasthttp.RequestCtx, c *caller, cur money.Currency) (wire.LedgerPage, core.AccountView, error) {
	page, err := s.ledgerPage(ctx, c, cur)
	if err != nil {
		return page, core.AccountView{}, err
	}
	a, err := s.account(c)
	return page, a, err
}

// ledgerPage reads the limit and offset parameters and returns that page
// of the caller's ledger in cur.
func (s *Server) ledgerPage(ctx *fasthttp.RequestCtx, c *caller, cur money.Currency) (wire.LedgerPage, error) {
	args := ctx.QueryArgs()
	limit, err := intParam(args, "limit", defaultLedgerLimit, 1, maxLedgerLimit)
	if err != nil {
		return wire.LedgerPage{}, err
	}
	offset, err := intParam(args, "offset", 0, 0, maxOffset)
	if err != nil {
		return wire.LedgerPage{}, err
	}
	entries, total, ok := s.eng.Ledger(c.account, cur, offset, limit)
	if !ok {
		return wire.LedgerPage{}, core.ErrAccountNotFound
	}
	page := wire.LedgerPage{Count: total, Limit: limit, Offset: offset, Ledger: make([]wire.LedgerItem, 0, len(entries))}
	for _, e := range entries {
		page.Ledger = append(page.Ledger, wire.LedgerItem{
			ID:           core.LedgerEntryID(e.Seq, e.Index),
			Amount:       e.Amount,
			TxType:       e.Type.String(),
			BalanceAfter: e.BalanceAfter,
			RefID:        e.Ref,
			CreatedAt:    wire.Timestamp(e.Time),
		})
	}
	return page, nil
}
