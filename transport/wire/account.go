package wire

import (
	"github.com/google/uuid"

	"marketd/core/money"
)

// Agent is an account as its owner sees it: balance is always KP
// (docs/API.md, "The agent object"); the optional profile fields are null
// when unset.
type Agent struct {
	ID            uuid.UUID    `json:"id"`
	Name          string       `json:"name"`
	Role          string       `json:"role"`
	Balance       money.Amount `json:"balance"`
	USDCBalance   money.Amount `json:"usdc_balance"`
	TradingMode   string       `json:"trading_mode"`
	WalletAddress *string      `json:"wallet_address"`
	Persona       string       `json:"persona"`
	TOSVersion    *string      `json:"tos_version"`
	TOSAcceptedAt *Timestamp   `json:"tos_accepted_at"`
	MemberSince   Timestamp    `json:"member_since"`
}

// AgentAnswer is the answer of POST /api/auth/register and login.
type AgentAnswer struct {
	Agent Agent `json:"agent"`
}

// Position is one open position: a market, currency and side with shares
// held.
type Position struct {
	MarketID uuid.UUID    `json:"market_id"`
	Side     string       `json:"side"`
	Currency string       `json:"currency"`
	Shares   money.Amount `json:"shares"`
	Cost     money.Amount `json:"cost"`
	AvgPrice float64      `json:"avg_price"`
}

// Stats sums the open positions and their cost basis in KP.
type Stats struct {
	OpenPositions int          `json:"open_positions"`
	TotalInvested money.Amount `json:"total_invested"`
}

// Holding is a position in the portfolio, valued at the market's current
// price.
type Holding struct {
	Position
	Title  string       `json:"title"`
	Status string       `json:"status"`
	Price  float64      `json:"price"`
	Value  money.Amount `json:"value"`
}

// PortfolioStats are a portfolio's Stats and the KP value of its
// holdings.
type PortfolioStats struct {
	Stats
	TotalValue money.Amount `json:"total_value"`
}

// Portfolio is the answer of GET /api/portfolio.
type Portfolio struct {
	Balance      money.Amount   `json:"balance"`
	USDCBalance  money.Amount   `json:"usdc_balance"`
	TradingMode  string         `json:"trading_mode"`
	Positions    []Holding      `json:"positions"`
	Stats        PortfolioStats `json:"stats"`
	RecentTrades []TradeSummary `json:"recent_trades"`
}

// Auth is how the caller authenticated: its method (api_key or session)
// and its scopes.
type Auth struct {
	Method string   `json:"method"`
	Scopes []string `json:"scopes"`
}

// CallerKey is the calling key's metadata in the profile (docs/API.md,
// "GET /api/agents/me").
type CallerKey struct {
	ID            uuid.UUID  `json:"id"`
	Name          string     `json:"name"`
	Prefix        string     `json:"prefix"`
	Scopes        []string   `json:"scopes"`
	RateLimitTier string     `json:"rate_limit_tier"`
	TotalRequests uint64     `json:"total_requests"`
	ExpiresAt     *Timestamp `json:"expires_at"`
}

// Profile is the answer of GET /api/agents/me: APIKey is null for a
// session.
type Profile struct {
	Agent        Agent          `json:"agent"`
	Auth         Auth           `json:"auth"`
	Stats        Stats          `json:"stats"`
	Positions    []Position     `json:"positions"`
	RecentTrades []TradeSummary `json:"recent_trades"`
	APIKey       *CallerKey     `json:"api_key"`
}
