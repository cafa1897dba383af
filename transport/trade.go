package transport

import (
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/core/money"
	"marketd/transport/strictjson"
	"marketd/transport/wire"
)

// tradeRequest accepts both request shapes of docs/API.md, "POST
// /api/markets/trade": the reference
// shape (market_id, side, shares, type) and the workflow shape (marketId,
// outcome, side as the direction, amount), told apart by the workflow's
// own field names.
type tradeRequest struct {
	MarketID    *string           `json:"market_id"`
	Side        *string           `json:"side"`
	Shares      strictjson.Number `json:"shares"`
	Type        *string           `json:"type"`
	Reasoning   string            `json:"reasoning"`
	MaxCost     strictjson.Number `json:"max_cost"`
	MinProceeds strictjson.Number `json:"min_proceeds"`

	WorkflowMarketID *string           `json:"marketId"`
	Outcome          *string           `json:"outcome"`
	Amount           strictjson.Number `json:"amount"`

	ExpectSeq strictjson.Number `json:"expect_seq"`
}

func (s *Server) trade(ctx *fasthttp.RequestCtx, c *caller) error {
	req, err := decodeTrade(&s.tradeBodies, ctx.PostBody(), c.account)
	if err != nil {
		return err
	}
	// The caller's trading mode chooses the currency (docs/API.md, "POST
	// /api/profile/trading-mode"), read by the trade with its account.
	req.TradingMode = true
	var r core.TradeResult
	if c.idem == nil {
		if err := s.eng.TradeInto(ctx, &req, &r); err != nil {
			return err
		}
		return WriteTrade(ctx, &r)
	}
	// The answer's fields go into the record (answer.go); a replay
	// renders the same JSON from them.
	req.Idem = c.idem.core(0)
	req.Answer = storeSingleTrade
	if err := s.eng.TradeInto(ctx, &req, &r); err != nil {
		return s.idemFailure(ctx, c, err)
	}
	return WriteTrade(ctx, &r)
}

// storeSingleTrade is the stored answer of a trade that is not a batch's.
func storeSingleTrade(r *core.TradeResult) []byte { return storeTrade(r, true) }

// mixedShapes is the reason given for a reference-shape field in a
// workflow-shape body.
const mixedShapes = "cannot be mixed with the workflow shape's marketId, outcome and amount; use market_id, side, shares, type or marketId, outcome, side, amount"

// toCore validates the body's fields, in the reference shape's names
// unless the body is in the workflow shape, and builds the core request.
func (b *tradeRequest) toCore(account uuid.UUID) (core.TradeRequest, error) {
	req := core.TradeRequest{Account: account, Reasoning: b.Reasoning}
	marketID, side, direction, shares := b.MarketID, b.Side, b.Type, b.Shares
	marketField, sideField, typeField, sharesField := "market_id", "side", "type", "shares"
	if b.WorkflowMarketID != nil || b.Outcome != nil || b.Amount.Set() {
		switch {
		case b.MarketID != nil:
			return req, fieldError("market_id", mixedShapes)
		case b.Type != nil:
			return req, fieldError("type", mixedShapes)
		case b.Shares.Set():
			return req, fieldError("shares", mixedShapes)
		}
		marketID, side, direction, shares = b.WorkflowMarketID, b.Outcome, b.Side, b.Amount
		marketField, sideField, typeField, sharesField = "marketId", "outcome", "side", "amount"
	}
	var err error
	if req.Market, err = requiredUUID(marketField, marketID); err != nil {
		return req, err
	}
	if req.Side, err = parseSide(sideField, side); err != nil {
		return req, err
	}
	if req.Shares, err = positiveAmount(sharesField, shares); err != nil {
		return req, err
	}
	if direction != nil {
		switch *direction {
		case "buy":
		case "sell":
			req.Sell = true
		default:
			return req, fieldError(typeField, "must be buy or sell")
		}
	}
	if req.Limit, req.HasLimit, err = b.limit(req.Sell); err != nil {
		return req, err
	}
	if err := strictjson.Runes("reasoning", b.Reasoning, 0, core.MaxReasoningRunes); err != nil {
		return req, err
	}
	if req.ExpectSeq, req.HasExpectSeq, err = expectSeq(b.ExpectSeq); err != nil {
		return req, err
	}
	return req, nil
}

// expectSeq reads an optional expect_seq: a market_seq, a whole number.
func expectSeq(n strictjson.Number) (uint64, bool, error) {
	if !n.Set() {
		return 0, false, nil
	}
	v, err := n.Int("expect_seq")
	if err != nil {
		return 0, false, err
	}
	if v < 0 {
		return 0, false, fieldError("expect_seq", "must not be negative")
	}
	return uint64(v), true, nil
}

// limit reads max_cost (buys) or min_proceeds (sells).
func (b *tradeRequest) limit(sell bool) (money.Amount, bool, error) {
	field, n, other, otherField := "max_cost", b.MaxCost, b.MinProceeds, "min_proceeds"
	if sell {
		field, n, other, otherField = "min_proceeds", b.MinProceeds, b.MaxCost, "max_cost"
	}
	if other.Set() {
		return 0, false, fieldError(otherField, "does not apply to a %s", tradeType(sell))
	}
	if !n.Set() {
		return 0, false, nil
	}
	a, err := n.Amount(field)
	if err != nil {
		return 0, false, err
	}
	if a < 0 || a > core.MaxAmount {
		return 0, false, fieldError(field, "must be from 0 to 1e9")
	}
	return a, true, nil
}

type splitMergeRequest struct {
	MarketID    *string           `json:"market_id"`
	Amount      strictjson.Number `json:"amount"`
	Type        *string           `json:"type"`
	MaxCost     strictjson.Number `json:"max_cost"`
	MinProceeds strictjson.Number `json:"min_proceeds"`
	ExpectSeq   strictjson.Number `json:"expect_seq"`
}

func (s *Server) splitMerge(ctx *fasthttp.RequestCtx, c *caller) error {
	var body splitMergeRequest
	if err := decodeBody(ctx, &body); err != nil {
		return err
	}
	// The currency is the caller's trading mode, as for a trade.
	req := core.SplitRequest{Account: c.account, TradingMode: true}
	if err := body.toCore(&req); err != nil {
		return err
	}
	if c.idem == nil {
		r, err := s.eng.SplitMerge(ctx, req)
		if err != nil {
			return err
		}
		return writeJSON(ctx, fasthttp.StatusOK, splitMergeAnswer(&r))
	}
	// As for trades: the answer's fields go into the record.
	req.Idem = c.idem.core(0)
	req.Answer = storeSplit
	r, err := s.eng.SplitMerge(ctx, req)
	if err != nil {
		return s.idemFailure(ctx, c, err)
	}
	return writeJSON(ctx, fasthttp.StatusOK, splitMergeAnswer(&r))
}

// toCore validates a split or merge body into req, whose account and
// currency the caller sets.
func (b *splitMergeRequest) toCore(req *core.SplitRequest) error {
	var err error
	if req.Market, err = requiredUUID("market_id", b.MarketID); err != nil {
		return err
	}
	if req.Amount, err = positiveAmount("amount", b.Amount); err != nil {
		return err
	}
	switch {
	case b.Type == nil:
		return fieldError("type", "is required")
	case *b.Type == "merge":
		req.Merge = true
	case *b.Type != "split":
		return fieldError("type", "must be split or merge")
	}
	// A split is priced as a buy (max_cost), a merge as a sell
	// (min_proceeds).
	limits := tradeRequest{MaxCost: b.MaxCost, MinProceeds: b.MinProceeds}
	if req.Limit, req.HasLimit, err = limits.limit(req.Merge); err != nil {
		return err
	}
	if req.ExpectSeq, req.HasExpectSeq, err = expectSeq(b.ExpectSeq); err != nil {
		return err
	}
	return nil
}

// splitMergeAnswer is the answer to a split or a merge.
func splitMergeAnswer(r *core.SplitResult) wire.SplitMerge {
	typ := "split"
	if r.Merge {
		typ = "merge"
	}
	return wire.SplitMerge{
		MarketID:      r.Market,
		Type:          typ,
		Currency:      r.Currency.String(),
		Amount:        r.Amount,
		Cost:          r.Cost,
		Vig:           r.Vig,
		BalanceAfter:  r.BalanceAfter,
		YesShares:     r.YesShares,
		NoShares:      r.NoShares,
		PriceYesAfter: r.PriceYesAfter,
		PriceNoAfter:  r.PriceNoAfter,
		MarketSeq:     r.MarketSeq,
	}
}

// requiredUUID reads a required UUID field.
func requiredUUID(field string, v *string) (uuid.UUID, error) {
	if v == nil {
		return uuid.UUID{}, fieldError(field, "is required")
	}
	return strictjson.UUID(field, *v)
}

// parseSide reads a required yes/no field.
func parseSide(field string, v *string) (core.Side, error) {
	switch {
	case v == nil:
		return 0, fieldError(field, "is required")
	case *v == "yes":
		return core.Yes, nil
	case *v == "no":
		return core.No, nil
	default:
		return 0, fieldError(field, "must be yes or no")
	}
}

// positiveAmount reads a required amount in (0, 1e9] with at most 6
// decimals (docs/API.md, "Conventions"); Amount refuses an absent one.
func positiveAmount(field string, n strictjson.Number) (money.Amount, error) {
	a, err := n.Amount(field)
	if err != nil {
		return 0, err
	}
	if a <= 0 || a > core.MaxAmount {
		return 0, fieldError(field, "must be positive and at most 1e9")
	}
	return a, nil
}
