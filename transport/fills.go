package transport

import (
	"encoding/json"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/transport/strictjson"
	"marketd/transport/wire"
)

// Paging of GET /api/trades (docs/API.md, "GET /api/trades").
const (
	defaultFillLimit = 50
	maxFillLimit     = 500
)

var errTradeNotFound = newError(fasthttp.StatusNotFound, "trade_not_found", "Trade not found")

func fillOf(t *core.TradeSummary) wire.Fill {
	return wire.Fill{TradeFields: tradeFieldsOf(t), Vig: t.Vig, CreatedAt: wire.Timestamp(t.Time)}
}

// listFills answers GET /api/trades: the caller's trades, newest first.
func (s *Server) listFills(ctx *fasthttp.RequestCtx, c *caller) error {
	args := ctx.QueryArgs()
	limit, err := intParam(args, "limit", defaultFillLimit, 1, maxFillLimit)
	if err != nil {
		return err
	}
	offset, err := intParam(args, "offset", 0, 0, maxOffset)
	if err != nil {
		return err
	}
	var market uuid.UUID
	if v := args.Peek("market_id"); v != nil {
		if market, err = strictjson.UUID("market_id", string(v)); err != nil {
			return err
		}
	}
	fills, total, err := s.eng.Fills(ctx, c.account, market, offset, limit)
	if err != nil {
		return err
	}
	out := wire.FillList{Count: total, Limit: limit, Offset: offset, Trades: make([]wire.Fill, len(fills))}
	for i := range fills {
		out.Trades[i] = fillOf(&fills[i])
	}
	return writeJSON(ctx, fasthttp.StatusOK, out)
}

// getFill answers GET /api/trades/{id}: one of the caller's trades.
func (s *Server) getFill(ctx *fasthttp.RequestCtx, c *caller) error {
	id, err := pathUUID(ctx, "id")
	if err != nil {
		return err
	}
	f, ok, err := s.eng.Fill(ctx, c.account, id)
	if err != nil {
		return err
	}
	if !ok {
		return errTradeNotFound
	}
	return writeJSON(ctx, fasthttp.StatusOK, fillOf(&f))
}

// idemLookup is the answer of GET /api/idempotency: what a key stored.
type idemLookup struct {
	Key       string           `json:"idempotency_key"`
	CreatedAt wire.Timestamp   `json:"created_at"`
	Items     []idemLookupItem `json:"items"`
}

type idemLookupItem struct {
	Index  uint32          `json:"index"`
	Status int             `json:"status"`
	Answer json.RawMessage `json:"answer"`
}

// lookupKey answers GET /api/idempotency?key=: the stored answers of one
// of the caller's keys, so that a bot whose request timed out can tell
// whether it happened (404: it did not, or the key expired).
func (s *Server) lookupKey(ctx *fasthttp.RequestCtx, c *caller) error {
	key := ctx.QueryArgs().Peek("key")
	if !validIdempotencyKey(key) {
		return fieldError("key", "must be 1 to %d printable ASCII characters", core.MaxIdempotencyKeyBytes)
	}
	entries, err := s.eng.Idempotent(ctx, c.account, string(key))
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return errIdemNotFound
	}
	out := idemLookup{Key: string(key), CreatedAt: wire.Timestamp(entries[0].Time), Items: make([]idemLookupItem, len(entries))}
	for i, e := range entries {
		body, err := renderStored(e.Answer)
		if err != nil {
			return err
		}
		out.Items[i] = idemLookupItem{Index: e.Index, Status: int(e.Status), Answer: json.RawMessage(trimNewline(body))}
	}
	return writeJSON(ctx, fasthttp.StatusOK, out)
}

// trimNewline drops the newline that ends a stored single answer.
func trimNewline(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		return b[:n-1]
	}
	return b
}
