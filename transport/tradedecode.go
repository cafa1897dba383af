package transport

import (
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
)

// tradeDecodeBodies are DecodeTrade's bodies, reused as the server's own
// (Server.tradeBodies) are.
var tradeDecodeBodies requestPool[tradeBody]

// DecodeTrade decodes and checks the body of POST /api/markets/trade as
// the endpoint does (docs/API.md, "POST /api/markets/trade": both shapes,
// strictjson's rules, the fields' messages) and returns the request it
// hands the engine for account. An error is the endpoint's 400; WriteError
// gives its answer. It is the trade handler's own decoding, so that a
// baseline that must check a trade body as marketd does (bench/baseline's
// least-trade handler) runs the same code.
func DecodeTrade(body []byte, account uuid.UUID) (core.TradeRequest, error) {
	return decodeTrade(&tradeDecodeBodies, body, account)
}

// decodeTrade decodes and checks body with a tradeBody from pool and
// returns the request for account. The body's strings point into it,
// which made it escape: a pooled one costs no allocation (pools.go). They
// may also point into body (tradeBody.fromFlat), which fasthttp reuses
// once the handler returns: the request copies what it keeps, and the
// tradeBody goes back to the pool, zeroed, before anything else.
func decodeTrade(pool *requestPool[tradeBody], body []byte, account uuid.UUID) (core.TradeRequest, error) {
	t := pool.get()
	err := t.decode(body)
	var req core.TradeRequest
	if err == nil {
		req, err = t.toCore(account)
	}
	pool.put(t)
	return req, err
}

// ValidKeyLiteral reports whether b has the form of an API key (svc_live_
// and 32 lowercase hex digits), as the server checks it before hashing
// (docs/API.md, "Authentication").
func ValidKeyLiteral(b []byte) bool { return validKeyLiteral(b) }

// ValidRequestID reports whether a client's X-Request-Id is kept as the
// server keeps it (docs/API.md, "Conventions").
func ValidRequestID(id []byte) bool { return validRequestID(id) }

// The answers of the router and of admission, for a handler served
// beside marketd's (bench/baseline's least-trade handler) that answers as
// it does: 404 not_found, 405 method_not_allowed, 401
// authentication_required (docs/API.md, "Errors").
var (
	ErrRouteNotFound          error = errNotFound
	ErrMethodNotAllowed       error = errMethod
	ErrAuthenticationRequired error = errAuthRequired
)

// WriteError answers err as marketd answers it (docs/API.md, "Errors"):
// its status and the error body, whose request_id is the one already set
// on the response. ok is false for an error that is not a client's,
// answered 500 internal_error, which the caller logs with its cause.
func WriteError(ctx *fasthttp.RequestCtx, err error) (ok bool) {
	ae, ok := toAPIError(err)
	writeError(ctx, ae)
	return ok
}
