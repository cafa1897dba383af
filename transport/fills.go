package transport

import (
	"encoding/json"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/core/money"
	"marketd/transport/strictjson"
)

// Paging of GET /api/trades (docs/API.md, "GET /api/trades").
const (
	defaultFillLimit = 50
	maxFillLimit     = 500
)

var errTradeNotFound = newError(fasthttp.StatusNotFound, "trade_not_found", "Trade not found")

// fillJSON is one of the caller's trades.
type fillJSON struct {
	TradeID   uuid.UUID    `json:"trade_id"`
	MarketID  uuid.UUID    `json:"market_id"`
	Side      string       `json:"side"`
	Type      string       `json:"type"`
	Currency  string       `json:"currency"`
	Shares    money.Amount `json:"shares"`
	Cost      money.Amount `json:"cost"`
	Vig       money.Amount `json:"vig"`
	CreatedAt timestamp    `json:"created_at"`
}

func fillOf(t *core.TradeSummary) fillJSON {
	return fillJSON{TradeID: t.ID, MarketID: t.Market, Side: t.Side.String(), Type: tradeType(t.Sell),
		Currency: t.Currency.String(), Shares: t.Shares, Cost: t.Cost, Vig: t.Vig, CreatedAt: timestamp(t.Time)}
}

type fillList struct {
	Count  int        `json:"count"`
	Limit  int        `json:"limit"`
	Offset int        `json:"offset"`
	Trades []fillJSON `json:"trades"`
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
	out := fillList{Count: total, Limit: limit, Offset: offset, Trades: make([]fillJSON, len(fills))}
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
	CreatedAt timestamp        `json:"created_at"`
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
	out := idemLookup{Key: string(key), CreatedAt: timestamp(entries[0].Time), Items: make([]idemLookupItem, len(entries))}
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
