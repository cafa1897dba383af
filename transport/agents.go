package transport

import (
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/core/money"
)

// Paging of the points and USDC ledgers (docs/API.md, "GET /api/points",
// "GET /api/token/balance").
const (
	defaultLedgerLimit = 100
	maxLedgerLimit     = 1000
)

type authJSON struct {
	Method string   `json:"method"`
	Scopes []string `json:"scopes"`
}

type statsJSON struct {
	OpenPositions int          `json:"open_positions"`
	TotalInvested money.Amount `json:"total_invested"`
}

// callerKeyJSON is the calling key's metadata in the profile (docs/API.md,
// "GET /api/agents/me").
type callerKeyJSON struct {
	ID            uuid.UUID  `json:"id"`
	Name          string     `json:"name"`
	Prefix        string     `json:"prefix"`
	Scopes        []string   `json:"scopes"`
	RateLimitTier string     `json:"rate_limit_tier"`
	TotalRequests uint64     `json:"total_requests"`
	ExpiresAt     *timestamp `json:"expires_at"`
}

type profileJSON struct {
	Agent        agentJSON          `json:"agent"`
	Auth         authJSON           `json:"auth"`
	Stats        statsJSON          `json:"stats"`
	Positions    []positionJSON     `json:"positions"`
	RecentTrades []tradeSummaryJSON `json:"recent_trades"`
	APIKey       *callerKeyJSON     `json:"api_key"`
}

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
func statsOf(ps []positionJSON) statsJSON {
	var st statsJSON
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
	out := profileJSON{
		Agent:        agentOf(&a),
		Auth:         authJSON{Method: c.method.String(), Scopes: scopeList(c.scopes)},
		Stats:        statsOf(ps),
		Positions:    ps,
		RecentTrades: tradesOf(&a),
	}
	if c.method == byKey {
		k := &c.key
		out.APIKey = &callerKeyJSON{ID: k.ID, Name: k.Name, Prefix: k.Prefix, Scopes: scopeList(k.Scopes),
			RateLimitTier: k.Tier.String(), TotalRequests: k.TotalRequests, ExpiresAt: optionalTime(k.ExpiresAt)}
	}
	return writeJSON(ctx, fasthttp.StatusOK, out)
}

// holdingJSON is a position in the portfolio, valued at the market's
// current price.
type holdingJSON struct {
	positionJSON
	Title  string       `json:"title"`
	Status string       `json:"status"`
	Price  float64      `json:"price"`
	Value  money.Amount `json:"value"`
}

type portfolioJSON struct {
	Balance      money.Amount       `json:"balance"`
	USDCBalance  money.Amount       `json:"usdc_balance"`
	TradingMode  string             `json:"trading_mode"`
	Positions    []holdingJSON      `json:"positions"`
	Stats        portfolioStats     `json:"stats"`
	RecentTrades []tradeSummaryJSON `json:"recent_trades"`
}

type portfolioStats struct {
	statsJSON
	TotalValue money.Amount `json:"total_value"`
}

func (s *Server) portfolio(ctx *fasthttp.RequestCtx, c *caller) error {
	a, err := s.account(c)
	if err != nil {
		return err
	}
	now := s.now().UnixNano()
	ps := positionsOf(&a)
	out := portfolioJSON{
		Balance:      a.Balances[money.KP],
		USDCBalance:  a.Balances[money.USDC],
		TradingMode:  a.Info.Mode.String(),
		Positions:    make([]holdingJSON, 0, len(ps)),
		Stats:        portfolioStats{statsJSON: statsOf(ps)},
		RecentTrades: tradesOf(&a),
	}
	for _, p := range ps {
		h := holdingJSON{positionJSON: p}
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

type ledgerItemJSON struct {
	ID           uuid.UUID    `json:"id"`
	Amount       money.Amount `json:"amount"`
	TxType       string       `json:"tx_type"`
	BalanceAfter money.Amount `json:"balance_after"`
	RefID        uuid.UUID    `json:"ref_id"`
	CreatedAt    timestamp    `json:"created_at"`
}

// ledgerPage is one page of a ledger, newest first: the points ledger
// (KP) and the token balance's (USDC) are shaped and paged alike
// (docs/API.md, "GET /api/points", "GET /api/token/balance").
type ledgerPage struct {
	Count  int              `json:"count"`
	Limit  int              `json:"limit"`
	Offset int              `json:"offset"`
	Ledger []ledgerItemJSON `json:"ledger"`
}

type pointsJSON struct {
	Balance money.Amount `json:"balance"`
	ledgerPage
}

func (s *Server) points(ctx *fasthttp.RequestCtx, c *caller) error {
	page, err := s.ledgerPage(ctx, c, money.KP)
	if err != nil {
		return err
	}
	a, err := s.account(c)
	if err != nil {
		return err
	}
	return writeJSON(ctx, fasthttp.StatusOK, pointsJSON{Balance: a.Balances[money.KP], ledgerPage: page})
}

// ledgerPage reads the limit and offset parameters and returns that page
// of the caller's ledger in cur.
func (s *Server) ledgerPage(ctx *fasthttp.RequestCtx, c *caller, cur money.Currency) (ledgerPage, error) {
	args := ctx.QueryArgs()
	limit, err := intParam(args, "limit", defaultLedgerLimit, 1, maxLedgerLimit)
	if err != nil {
		return ledgerPage{}, err
	}
	offset, err := intParam(args, "offset", 0, 0, maxOffset)
	if err != nil {
		return ledgerPage{}, err
	}
	entries, total, ok := s.eng.Ledger(c.account, cur, offset, limit)
	if !ok {
		return ledgerPage{}, core.ErrAccountNotFound
	}
	page := ledgerPage{Count: total, Limit: limit, Offset: offset, Ledger: make([]ledgerItemJSON, 0, len(entries))}
	for _, e := range entries {
		page.Ledger = append(page.Ledger, ledgerItemJSON{
			ID:           core.LedgerEntryID(e.Seq, e.Index),
			Amount:       e.Amount,
			TxType:       e.Type.String(),
			BalanceAfter: e.BalanceAfter,
			RefID:        e.Ref,
			CreatedAt:    timestamp(e.Time),
		})
	}
	return page, nil
}
