package transport

import (
	"github.com/valyala/fasthttp"

	"marketd/core"
)

// access says which credentials a route takes.
type access uint8

const (
	// public routes need no credentials; credentials that are sent are
	// still checked, counted and rate-limited as the caller's.
	public access = iota
	// keyOrSession routes take an API key with one of the route's scopes,
	// or a session.
	keyOrSession
	// sessionOnly routes take a session only: an API key gets 403
	// "Session required" (docs/API.md, "Order of checks").
	sessionOnly
)

// route declares one endpoint and every rule the middleware enforces for
// it before its handler runs.
type route struct {
	method string
	path   string
	access access
	// scopes: a key must hold at least one of them; 0 on public and
	// session-only routes.
	scopes core.Scopes
	// admin: the caller's account must have the admin role, whatever its
	// credentials.
	admin  bool
	handle func(ctx *fasthttp.RequestCtx, c *caller) error
}

// Paths that the handling of Idempotency-Keys and rate limits names.
const (
	pathTrade      = "/api/markets/trade"
	pathSplitMerge = "/api/markets/split-merge"
	pathQuote      = "/api/markets/quote"
	pathBatch      = "/api/markets/trades"
)

// routes is the route table: every endpoint of the service and its rules
// (docs/API.md, "Endpoints", "Authentication").
func (s *Server) routes() []route {
	const get, post, del, patch = fasthttp.MethodGet, fasthttp.MethodPost, fasthttp.MethodDelete, fasthttp.MethodPatch
	rs := []route{
		{post, "/api/auth/register", public, 0, false, s.register},
		{post, "/api/auth/login", public, 0, false, s.login},
		{post, "/api/auth/logout", sessionOnly, 0, false, s.logout},
		{post, "/api/auth/password", sessionOnly, 0, false, s.changePassword},

		{post, "/api/keys", sessionOnly, 0, false, s.createKey},
		{get, "/api/keys", keyOrSession, core.ScopeRead, false, s.listKeys},
		{del, "/api/keys/{id}", sessionOnly, 0, false, s.revokeKey},
		{post, "/api/keys/{id}/rotate", sessionOnly, 0, false, s.rotateKey},

		{get, "/api/agents/me", keyOrSession, core.ScopeRead, false, s.me},
		{get, "/api/portfolio", keyOrSession, core.ScopeRead, false, s.portfolio},
		{get, "/api/points", keyOrSession, core.ScopeRead, false, s.points},

		{get, "/api/settings", keyOrSession, core.ScopeRead, false, s.getSettings},
		{patch, "/api/settings", keyOrSession, core.ScopeTrade, false, s.patchSettings},
		{post, "/api/profile/persona", keyOrSession, core.ScopeTrade, false, s.setPersona},
		{post, "/api/profile/accept-tos", keyOrSession, core.ScopeTrade, false, s.acceptTOS},
		{post, "/api/profile/trading-mode", keyOrSession, core.ScopeTrade, false, s.setTradingMode},

		{post, "/api/wallet", keyOrSession, core.ScopeTrade, false, s.linkWallet},
		{del, "/api/wallet", keyOrSession, core.ScopeTrade, false, s.unlinkWallet},
		{post, "/api/token/deposit", keyOrSession, core.ScopeTrade, false, s.deposit},
		{post, "/api/token/withdraw", keyOrSession, core.ScopeTrade, false, s.withdraw},
		{get, "/api/token/balance", keyOrSession, core.ScopeRead, false, s.tokenBalance},

		{get, "/api/markets/active", public, 0, false, s.activeMarkets},
		{get, "/api/markets", public, 0, false, s.listMarkets},
		{get, "/api/markets/{id}", public, 0, false, s.getMarket},
		{post, "/api/markets", keyOrSession, core.ScopeAdmin, true, s.createMarket},
		{post, pathTrade, keyOrSession, core.ScopeTrade, false, s.trade},
		{post, pathSplitMerge, keyOrSession, core.ScopeTrade, false, s.splitMerge},
		{post, pathQuote, keyOrSession, core.ScopeRead, false, s.quote},
		{post, pathBatch, keyOrSession, core.ScopeTrade, false, s.tradeBatch},
		{get, "/api/trades", keyOrSession, core.ScopeRead, false, s.listFills},
		{get, "/api/trades/{id}", keyOrSession, core.ScopeRead, false, s.getFill},
		{get, "/api/idempotency", keyOrSession, core.ScopeRead, false, s.lookupKey},

		{get, "/api/leaderboard", public, 0, false, s.leaderboard},
		{get, "/api/vig", keyOrSession, core.ScopeRead, false, s.vig},
		{get, "/api/notifications", keyOrSession, core.ScopeRead, false, s.notifications},
		{patch, "/api/notifications", keyOrSession, core.ScopeRead, false, s.markNotifications},

		{get, "/api/referral/code", keyOrSession, core.ScopeRead, false, s.referralCode},
		// Either scope suffices (docs/API.md, "POST /api/referral/apply").
		{post, "/api/referral/apply", keyOrSession, core.ScopeRead | core.ScopeTrade, false, s.applyReferral},
		{get, "/api/referral/stats", keyOrSession, core.ScopeRead, false, s.referralStats},

		{post, "/api/oracle/propose", keyOrSession, core.ScopeTrade, false, s.propose},
		{post, "/api/oracle/challenge", keyOrSession, core.ScopeTrade, false, s.challenge},
		{post, "/api/oracle/vote", keyOrSession, core.ScopeTrade, false, s.vote},
		{get, "/api/oracle/status", keyOrSession, core.ScopeRead, false, s.oracleStatus},

		{post, "/api/admin/settle", keyOrSession, core.ScopeAdmin, true, s.settle},
		// Custody: a session only, so that a leaked admin key cannot mint
		// (docs/API.md, "Custody").
		{get, "/api/admin/deposits", sessionOnly, 0, true, s.listDeposits},
		{post, "/api/admin/deposits/{id}/confirm", sessionOnly, 0, true, s.confirmDeposit},
		{post, "/api/admin/deposits/{id}/reject", sessionOnly, 0, true, s.rejectDeposit},
		{get, "/api/admin/withdrawals", sessionOnly, 0, true, s.listWithdrawals},
		{post, "/api/admin/withdrawals/{id}/sent", sessionOnly, 0, true, s.withdrawalSent},
		{post, "/api/admin/withdrawals/{id}/failed", sessionOnly, 0, true, s.withdrawalFailed},
		{get, "/api/admin/stats", keyOrSession, core.ScopeAdmin, true, s.stats},
	}
	if s.cfg.Backup != nil {
		rs = append(rs, route{post, "/api/admin/backup", keyOrSession, core.ScopeAdmin, true, s.backup})
	}
	return rs
}
