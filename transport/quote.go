package transport

import (
	"encoding/json"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/core/money"
)

// quoteResponse is the answer of POST /api/markets/quote: what the trade,
// split or merge of the same body would cost or pay now, and the
// market_seq to send as its expect_seq (docs/API.md, "Binding quotes").
type quoteResponse struct {
	MarketID      uuid.UUID     `json:"market_id"`
	Type          string        `json:"type"` // buy, sell, split or merge
	Side          *string       `json:"side,omitempty"`
	Currency      string        `json:"currency"`
	Shares        *money.Amount `json:"shares,omitempty"`
	Amount        *money.Amount `json:"amount,omitempty"`
	Cost          money.Amount  `json:"cost"`
	Vig           money.Amount  `json:"vig"`
	PriceYesAfter float64       `json:"price_yes_after"`
	PriceNoAfter  float64       `json:"price_no_after"`
	MarketSeq     uint64        `json:"market_seq"`
}

func (s *Server) quote(ctx *fasthttp.RequestCtx, c *caller) error {
	// The body is a trade's or a split-merge's, told apart by its type;
	// each is then decoded strictly as its own shape.
	var peek struct {
		Type *string `json:"type"`
	}
	_ = json.Unmarshal(ctx.PostBody(), &peek) // a malformed body fails the strict decode below
	cur, err := s.eng.TradingMode(c.account)
	if err != nil {
		return err
	}
	if peek.Type != nil && (*peek.Type == "split" || *peek.Type == "merge") {
		var body splitMergeRequest
		if err := decodeBody(ctx, &body); err != nil {
			return err
		}
		if body.ExpectSeq.Set() {
			return fieldError("expect_seq", "does not apply to a quote")
		}
		req := core.SplitRequest{Account: c.account, Currency: cur}
		if err := body.toCore(&req); err != nil {
			return err
		}
		q, err := s.eng.QuoteSplit(req)
		if err != nil {
			return err
		}
		amount := req.Amount
		return writeJSON(ctx, fasthttp.StatusOK, quoteResponse{MarketID: q.Market, Type: *peek.Type,
			Currency: q.Currency.String(), Amount: &amount, Cost: q.Cost, Vig: q.Vig, PriceYesAfter: q.PriceYesAfter,
			PriceNoAfter: q.PriceNoAfter, MarketSeq: q.MarketSeq})
	}
	var body tradeRequest
	if err := decodeBody(ctx, &body); err != nil {
		return err
	}
	if body.ExpectSeq.Set() {
		return fieldError("expect_seq", "does not apply to a quote")
	}
	req, err := body.toCore(c.account)
	if err != nil {
		return err
	}
	req.Currency = cur
	q, err := s.eng.QuoteTrade(req)
	if err != nil {
		return err
	}
	side, shares := req.Side.String(), req.Shares
	return writeJSON(ctx, fasthttp.StatusOK, quoteResponse{MarketID: q.Market, Type: tradeType(req.Sell), Side: &side,
		Currency: q.Currency.String(), Shares: &shares, Cost: q.Cost, Vig: q.Vig, PriceYesAfter: q.PriceYesAfter,
		PriceNoAfter: q.PriceNoAfter, MarketSeq: q.MarketSeq})
}
