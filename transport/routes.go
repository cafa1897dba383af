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
	handle handler
	// answer, when not nil, renders the route's answer from its
	// operation's outcome, to be stored under an Idempotency-Key
	// (storedCall); the route's handler renders its answer with the same
	// function.
	answer answerFunc
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
		{post, "/api/auth/register", public, 0, false, withBody(s.register), nil},
		{post, "/api/auth/login", public, 0, false, withBody(s.login), nil},
		{post, "/api/auth/logout", sessionOnly, 0, false, s.logout, nil},
		{post, "/api/auth/password", sessionOnly, 0, false, withBody(s.changePassword), nil},

		{post, "/api/keys", sessionOnly, 0, false, withBody(s.createKey), nil},
		{get, "/api/keys", keyOrSession, core.ScopeRead, false, s.listKeys, nil},
		{del, "/api/keys/{id}", sessionOnly, 0, false, s.revokeKey, stored(revokedOf)},
		{post, "/api/keys/{id}/rotate", sessionOnly, 0, false, s.rotateKey, nil},

		{get, "/api/agents/me", keyOrSession, core.ScopeRead, false, s.me, nil},
		{get, "/api/portfolio", keyOrSession, core.ScopeRead, false, s.portfolio, nil},
		{get, "/api/points", keyOrSession, core.ScopeRead, false, s.points, nil},

		{get, "/api/settings", keyOrSession, core.ScopeRead, false, s.getSettings, nil},
		{patch, "/api/settings", keyOrSession, core.ScopeTrade, false, withBody(s.patchSettings), stored(settingsAnswer)},
		{post, "/api/profile/persona", keyOrSession, core.ScopeTrade, false, withBody(s.setPersona), stored(personaOf)},
		{post, "/api/profile/accept-tos", keyOrSession, core.ScopeTrade, false, withBody(s.acceptTOS), stored(tosOf)},
		{post, "/api/profile/trading-mode", keyOrSession, core.ScopeTrade, false, withBody(s.setTradingMode), stored(tradingModeOf)},

		{post, "/api/wallet", keyOrSession, core.ScopeTrade, false, withBody(s.linkWallet), stored(walletOf)},
		{del, "/api/wallet", keyOrSession, core.ScopeTrade, false, s.unlinkWallet, stored(unlinkedOf)},
		{post, "/api/token/deposit", keyOrSession, core.ScopeTrade, false, withBody(s.deposit), stored(depositResponseOf)},
		{post, "/api/token/withdraw", keyOrSession, core.ScopeTrade, false, withBody(s.withdraw), stored(withdrawResponseOf)},
		{get, "/api/token/balance", keyOrSession, core.ScopeRead, false, s.tokenBalance, nil},

		{get, "/api/markets/active", public, 0, false, s.activeMarkets, nil},
		{get, "/api/markets", public, 0, false, s.listMarkets, nil},
		{get, "/api/markets/{id}", public, 0, false, s.getMarket, nil},
		{post, "/api/markets", keyOrSession, core.ScopeAdmin, true, withBody(s.createMarket), stored(createdMarketAnswer)},
		{post, pathTrade, keyOrSession, core.ScopeTrade, false, s.trade, nil},
		{post, pathSplitMerge, keyOrSession, core.ScopeTrade, false, s.splitMerge, nil},
		{post, pathQuote, keyOrSession, core.ScopeRead, false, s.quote, nil},
		{post, pathBatch, keyOrSession, core.ScopeTrade, false, s.tradeBatch, nil},
		{get, "/api/trades", keyOrSession, core.ScopeRead, false, s.listFills, nil},
		{get, "/api/trades/{id}", keyOrSession, core.ScopeRead, false, s.getFill, nil},
		{get, "/api/idempotency", keyOrSession, core.ScopeRead, false, s.lookupKey, nil},

		{get, "/api/leaderboard", public, 0, false, s.leaderboard, nil},
		{get, "/api/vig", keyOrSession, core.ScopeRead, false, s.vig, nil},
		{get, "/api/notifications", keyOrSession, core.ScopeRead, false, s.notifications, nil},
		{patch, "/api/notifications", keyOrSession, core.ScopeRead, false, withBody(s.markNotifications), stored(markedOf)},

		{get, "/api/referral/code", keyOrSession, core.ScopeRead, false, s.referralCode, nil},
		// Either scope suffices (docs/API.md, "POST /api/referral/apply").
		{post, "/api/referral/apply", keyOrSession, core.ScopeRead | core.ScopeTrade, false, withBody(s.applyReferral), stored(referralAppliedOf)},
		{get, "/api/referral/stats", keyOrSession, core.ScopeRead, false, s.referralStats, nil},

		{post, "/api/oracle/propose", keyOrSession, core.ScopeTrade, false, withBody(s.propose), stored(proposalOf)},
		{post, "/api/oracle/challenge", keyOrSession, core.ScopeTrade, false, withBody(s.challenge), stored(proposalOf)},
		{post, "/api/oracle/vote", keyOrSession, core.ScopeTrade, false, withBody(s.vote), stored(proposalOf)},
		{get, "/api/oracle/status", keyOrSession, core.ScopeRead, false, s.oracleStatus, nil},

		{post, "/api/admin/settle", keyOrSession, core.ScopeAdmin, true, withBody(s.settle), stored(settleResponseOf)},
		// Custody: a session only, so that a leaked admin key cannot mint
		// (docs/API.md, "Custody").
		{get, "/api/admin/deposits", sessionOnly, 0, true, s.listDeposits, nil},
		{post, "/api/admin/deposits/{id}/confirm", sessionOnly, 0, true, s.confirmDeposit, stored(depositDecisionOf)},
		{post, "/api/admin/deposits/{id}/reject", sessionOnly, 0, true, s.rejectDeposit, stored(depositDecisionOf)},
		{get, "/api/admin/withdrawals", sessionOnly, 0, true, s.listWithdrawals, nil},
		{post, "/api/admin/withdrawals/{id}/sent", sessionOnly, 0, true, s.withdrawalSent, stored(withdrawalDecisionOf)},
		{post, "/api/admin/withdrawals/{id}/failed", sessionOnly, 0, true, s.withdrawalFailed, stored(withdrawalDecisionOf)},
		{get, "/api/admin/stats", keyOrSession, core.ScopeAdmin, true, s.stats, nil},
	}
	if s.cfg.Backup != nil {
		// A session only, as custody: a leaked admin key must not be able
		// to fill the backup directory's disk (docs/API.md,
		// "POST /api/admin/backup").
		rs = append(rs, route{post, "/api/admin/backup", sessionOnly, 0, true, withBody(s.backup), nil})
	}
	return rs
}
