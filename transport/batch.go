package transport

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/valyala/fasthttp"

	"marketd/core"
)

// batchRequest is the body of POST /api/markets/trades.
type batchRequest struct {
	Trades *[]tradeRequest `json:"trades"`
}

// batchItemError is a refused item's answer: an error body without
// request_id, which the whole answer's X-Request-Id gives.
type batchItemError struct {
	Error string `json:"error"`
	Code  string `json:"code"`
	Field string `json:"field,omitempty"`
}

// requestCost returns how many requests a request counts as against the
// rate limit: a batch one per item, when its body can be read; anything
// else one. A batch whose body cannot be read counts one, and its handler
// refuses it.
func requestCost(ctx *fasthttp.RequestCtx, rt *route) int {
	if rt.path != pathBatch {
		return 1
	}
	var peek struct {
		Trades []json.RawMessage `json:"trades"`
	}
	if err := json.Unmarshal(ctx.PostBody(), &peek); err != nil {
		return 1
	}
	return min(max(len(peek.Trades), 1), core.MaxBatchTrades)
}

// tradeBatch runs up to core.MaxBatchTrades trades in order, each on its
// own, and answers with one result or error per item, in order, once every
// applied item is durable (docs/API.md, "POST /api/markets/trades").
func (s *Server) tradeBatch(ctx *fasthttp.RequestCtx, c *caller) error {
	trades, present, err := decodeBatch(ctx.PostBody())
	switch {
	case err != nil:
		return err
	case !present:
		return fieldError("trades", "is required")
	}
	if len(trades) == 0 || len(trades) > core.MaxBatchTrades {
		return fieldError("trades", "must hold 1 to %d trades", core.MaxBatchTrades)
	}
	cur, err := s.eng.TradingMode(c.account)
	if err != nil {
		return err
	}
	stored, err := s.batchStored(ctx, c, len(trades))
	if err != nil {
		return err
	}
	results := make([][]byte, len(trades))
	items := make([]core.BatchTrade, 0, len(trades))
	index := make([]int, 0, len(trades)) // items[j] is trades[index[j]]
	replayed := 0
	for i := range trades {
		if stored[i] != nil {
			b, err := renderStored(stored[i])
			if err != nil {
				return err
			}
			results[i] = b
			replayed++
			continue
		}
		req, err := trades[i].toCore(c.account)
		if err != nil {
			results[i] = s.batchError(ctx, err)
			continue
		}
		req.Currency = cur
		if c.idem != nil {
			req.Idem = c.idem.core(i)
			req.Answer = storeBatchTrade
		}
		items = append(items, core.BatchTrade{Req: req})
		index = append(index, i)
	}
	s.eng.TradeBatch(ctx, items)
	if err := s.batchResults(ctx, c, items, index, results); err != nil {
		return err
	}
	if replayed == len(trades) {
		ctx.Response.Header.Set(HeaderReplayed, "true")
	}
	writeAnswer(ctx, joinResults(results))
	return nil
}

// batchStored returns the stored answers of a batch's items by index: a
// retry of a batch answers the items stored by the first try from their
// records and runs the rest. Without an Idempotency-Key there are none.
func (s *Server) batchStored(ctx *fasthttp.RequestCtx, c *caller, n int) ([core.MaxBatchTrades][]byte, error) {
	var stored [core.MaxBatchTrades][]byte
	if c.idem == nil {
		return stored, nil
	}
	entries, err := s.eng.Idempotent(ctx, c.account, c.idem.key)
	if err != nil {
		return stored, err
	}
	for _, e := range entries {
		if int(e.Index) < n {
			stored[e.Index] = e.Answer
		}
	}
	return stored, nil
}

// batchResults fills results[index[j]] with the answer of items[j] once the
// batch has run: its result, its refusal, or, when a request that got there
// first stored it, the stored answer.
func (s *Server) batchResults(ctx *fasthttp.RequestCtx, c *caller, items []core.BatchTrade, index []int, results [][]byte) error {
	// The trades' answers share one buffer, sized for the usual answer,
	// rather than each growing its own from nothing: that was about five
	// allocations per item.
	answers := make([]byte, 0, len(items)*tradeAnswerBytes)
	for j := range items {
		it := &items[j]
		switch {
		case errors.Is(it.Err, core.ErrIdempotencyReplay):
			b, err := s.storedItem(ctx, c, index[j])
			if err != nil {
				return err
			}
			results[index[j]] = b
		case it.Err != nil:
			results[index[j]] = s.batchError(ctx, it.Err)
		default:
			start := len(answers)
			var err error
			if answers, err = appendTradeJSON(answers, &it.Result); err != nil {
				return err
			}
			results[index[j]] = answers[start:len(answers):len(answers)]
		}
	}
	return nil
}

// storeBatchTrade is the stored answer of a batch's trade: an item of the
// results, without a newline.
func storeBatchTrade(r *core.TradeResult) []byte { return storeTrade(r, false) }

// batchError is a refused item's answer; an error no table maps is a
// server failure, logged with its cause and answered as the 500's body.
func (s *Server) batchError(ctx *fasthttp.RequestCtx, err error) []byte {
	ae, known := toAPIError(err)
	if !known {
		s.log.Error("batch item failed", "request_id", requestID(ctx), "err", err)
	}
	b, _ := json.Marshal(batchItemError{Error: ae.msg, Code: ae.code, Field: ae.field}) // strings only
	return b
}

// storedItem returns the stored answer of item index of the caller's key.
func (s *Server) storedItem(ctx *fasthttp.RequestCtx, c *caller, index int) ([]byte, error) {
	entries, err := s.eng.Idempotent(ctx, c.account, c.idem.key)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if int(e.Index) == index {
			return renderStored(e.Answer)
		}
	}
	return nil, fmt.Errorf("transport: stored answer of batch item %d gone: %w", index, core.ErrIdempotencyReplay)
}

// joinResults returns {"results": [...]} with the items' encoded answers,
// as writeJSON would write it.
func joinResults(results [][]byte) []byte {
	const open, end = `{"results":[`, "]}\n"
	n := len(open) + len(results) + len(end)
	for _, r := range results {
		n += len(r)
	}
	b := make([]byte, 0, n)
	b = append(b, open...)
	for i, r := range results {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r...)
	}
	return append(b, end...)
}
