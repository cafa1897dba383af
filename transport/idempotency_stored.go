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

// Routes whose answers are stored under an Idempotency-Key through the one
// generic path (storedCall) name an answerFunc in the route table: the
// operation's outcome, rendered by it, goes into the operation's own
// record, and the client gets exactly those bytes, first time and on
// replay. Trades, split-merges and batches store compact answers of their
// own (answer.go). Every other state-changing route refuses the header
// (idemSupportOf); routes_test checks that each one is in one of these
// sets.

// stored adapts the function that renders a route's answer from its
// operation's outcome to an answerFunc: the handler's answer and the
// stored one are rendered by the same function.
func stored[R, A any](render func(R) A) answerFunc {
	return func(outcome any) any { return render(outcome.(R)) }
}

// settingsAnswer is the answer of PATCH /api/settings.
func settingsAnswer(info core.AccountInfo) settingsJSON { return settingsOf(info.Settings) }

// createdMarketAnswer is the answer of POST /api/markets: 201 Created.
func createdMarketAnswer(v *core.MarketView) statusAnswer {
	return statusAnswer{fasthttp.StatusCreated, marketOf(v, v.Info.CreatedAt)}
}

// storedCall runs the handler of a route with an answerFunc and an
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
