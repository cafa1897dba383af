package transport

import (
	"github.com/google/uuid"

	"marketd/core"
)

// tradeDecodeBodies are DecodeTrade's bodies, reused as the server's own
// (Server.tradeBodies) are.
var tradeDecodeBodies requestPool[tradeBody]

// DecodeTrade decodes and checks the body of POST /api/markets/trade as
// the endpoint does (docs/API.md, "POST /api/markets/trade": both shapes,
// strictjson's rules, the fields' messages) and returns the request it
// hands the engine for account. An error is the endpoint's 400; ErrorAnswer
// gives its answer. It is the trade handler's own decoding, so that a
// baseline that must check a trade body as marketd does (bench/baseline's
// least-trade handler) runs the same code.
func DecodeTrade(body []byte, account uuid.UUID) (core.TradeRequest, error) {
	t := tradeDecodeBodies.get()
	err := t.decode(body)
	var req core.TradeRequest
	if err == nil {
		req, err = t.toCore(account)
	}
	tradeDecodeBodies.put(t)
	return req, err
}

// ErrorAnswer returns the answer docs/API.md, "Errors", gives for err: its
// status, code, field ("" for none) and message; ok is false for an error
// that is not a client's, answered 500 internal_error (and logged).
func ErrorAnswer(err error) (status int, code, field, msg string, ok bool) {
	ae, ok := toAPIError(err)
	return ae.status, ae.code, ae.field, ae.msg, ok
}
