package transport

import (
	"github.com/valyala/fasthttp"

	"marketd/core"
)

// answerFunc renders a route's answer from its core operation's outcome
// (the value the operation returns), for the answer an Idempotency-Key
// stores: a value to encode as JSON with 200 OK, or a statusAnswer. It
// runs under the operation's locks (core.IdemCall): it must only encode,
// never call the engine.
type answerFunc func(outcome any) any

// statusAnswer is an answer whose status is not 200 OK.
type statusAnswer struct {
	status int
	v      any
}

// storedAnswers are the routes whose answers are stored under an
// Idempotency-Key through the one generic path (storedCall): the
// operation's outcome, rendered by the route's answerFunc, goes into the
// operation's own record, and the client gets exactly those bytes, first
// time and on replay. Trades, split-merges and batches store compact
// answers of their own (answer.go). Every other state-changing route
// refuses the header (idemSupportOf); routes_test checks that each one is
// in one of these sets.
func storedAnswers() map[routeKey]answerFunc {
	return map[routeKey]answerFunc{
		{fasthttp.MethodPatch, "/api/settings"}: func(o any) any { return settingsOf(o.(core.AccountInfo).Settings) },
		{fasthttp.MethodPost, "/api/profile/persona"}: func(o any) any {
			p := o.(core.AccountInfo).Persona
			return personaJSON{Persona: &p}
		},
		{fasthttp.MethodPost, "/api/profile/accept-tos"}: func(o any) any { return tosOf(o.(core.AccountInfo)) },
		{fasthttp.MethodPost, "/api/profile/trading-mode"}: func(o any) any {
			return tradingModeJSON{TradingMode: o.(core.AccountInfo).Mode.String()}
		},
		{fasthttp.MethodPost, "/api/wallet"}:   func(o any) any { return walletJSON{WalletAddress: o.(core.AccountInfo).Wallet} },
		{fasthttp.MethodDelete, "/api/wallet"}: func(o any) any { return unlinkedOf(o.(core.AccountInfo)) },
		{fasthttp.MethodPost, "/api/token/deposit"}: func(o any) any {
			r := o.(core.TransferResult)
			return depositResponse{Deposit: depositOf(r.Transfer), USDCBalance: r.USDCBalance}
		},
		{fasthttp.MethodPost, "/api/token/withdraw"}: func(o any) any {
			r := o.(core.TransferResult)
			return withdrawResponse{Withdrawal: withdrawalOf(r.Transfer), USDCBalance: r.USDCBalance}
		},
		{fasthttp.MethodPost, "/api/referral/apply"}: func(o any) any { return referralAppliedOf(o.(core.ReferralApplied)) },
		{fasthttp.MethodPatch, "/api/notifications"}: func(o any) any { return markNotesJSON{Updated: o.(int)} },
		{fasthttp.MethodPost, "/api/markets"}: func(o any) any {
			v := o.(*core.MarketView)
			return statusAnswer{fasthttp.StatusCreated, marketOf(v, v.Info.CreatedAt)}
		},
		{fasthttp.MethodPost, "/api/oracle/propose"}:   func(o any) any { return proposalOf(o.(core.ProposalView)) },
		{fasthttp.MethodPost, "/api/oracle/challenge"}: func(o any) any { return proposalOf(o.(core.ProposalView)) },
		{fasthttp.MethodPost, "/api/oracle/vote"}:      func(o any) any { return proposalOf(o.(core.ProposalView)) },
		{fasthttp.MethodDelete, "/api/keys/{id}"}: func(o any) any {
			return revokedKey{ID: o.(core.Key).ID, Status: "revoked"}
		},
		{fasthttp.MethodPost, "/api/admin/deposits/{id}/confirm"}: func(o any) any {
			return depositDecisionOf(o.(core.TransferDecided))
		},
		{fasthttp.MethodPost, "/api/admin/deposits/{id}/reject"}: func(o any) any {
			return depositDecisionOf(o.(core.TransferDecided))
		},
		{fasthttp.MethodPost, "/api/admin/withdrawals/{id}/sent"}: func(o any) any {
			return withdrawalDecisionOf(o.(core.TransferDecided))
		},
		{fasthttp.MethodPost, "/api/admin/withdrawals/{id}/failed"}: func(o any) any {
			return withdrawalDecisionOf(o.(core.TransferDecided))
		},
		// A settlement stores its answer in its first record, before its
		// other steps pay (core's Settle).
		{fasthttp.MethodPost, "/api/admin/settle"}: func(o any) any { return settleResponseOf(o.(core.SettleResult)) },
	}
}

// routeKey names a route by method and path pattern.
type routeKey struct{ method, path string }

// storedCall runs the handler of a route of storedAnswers with an
// Idempotency-Key: the key travels to core in the request's context
// (core.IdemContextKey), core checks it and stores the answer rendered by
// rt.answer in the record of the change, and the client gets the stored
// bytes. A handler that changes nothing stores nothing and answers as
// without a key; a replay found by core (a concurrent first request got
// there first) is answered from the stored entry.
func (s *Server) storedCall(ctx *fasthttp.RequestCtx, rt *route, c *caller) error {
	var stored []byte
	status := fasthttp.StatusOK
	ic := &core.IdemCall{Idempotent: c.idem.core(0), Account: c.account,
		Answer: func(outcome any) (uint16, []byte) {
			v := rt.answer(outcome)
			if sa, ok := v.(statusAnswer); ok {
				status, v = sa.status, sa.v
			}
			stored = storeJSON(encodeAnswer(v))
			return uint16(status), stored
		}}
	ctx.SetUserValue(core.IdemContextKey{}, ic)
	err := rt.handle(ctx, c)
	ctx.RemoveUserValue(core.IdemContextKey{})
	if err != nil {
		return s.idemFailure(ctx, c, err)
	}
	if stored != nil {
		// The answer the handler wrote may rest on reads made after the
		// change; the stored one is what every repeat gets.
		body, err := renderStored(stored)
		if err != nil {
			return err
		}
		ctx.Response.ResetBody()
		writeAnswer(ctx, body)
		ctx.SetStatusCode(status)
	}
	return nil
}
