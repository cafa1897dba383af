package load

import (
	"encoding/json"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestRequestsFill checks each op's request as the prebuilt table fills it:
// method, URI, credentials, content type and body, the body read back as
// JSON (docs/API.md, "POST /api/markets/trade" and
// "POST /api/markets/split-merge"). The request is filled twice in a row
// with different ops, as a worker reuses it.
func TestRequestsFill(t *testing.T) {
	markets := []string{"0b7ac0d2-0000-4000-8000-000000000001", "0b7ac0d2-0000-4000-8000-000000000002"}
	rs := newRequests("127.0.0.1:9", markets)
	b := &botState{authorization: "Bearer mk_test"}
	type body struct {
		MarketID string          `json:"market_id"`
		Side     string          `json:"side,omitempty"`
		Type     string          `json:"type"`
		Shares   json.RawMessage `json:"shares,omitempty"`
		Amount   json.RawMessage `json:"amount,omitempty"`
	}
	for _, c := range []struct {
		p      planned
		method string
		path   string
		want   *body // nil: no body
	}{
		{planned{OpBuy, 1, 0}, "POST", "/api/markets/trade", &body{MarketID: markets[1], Side: "yes", Type: "buy", Shares: json.RawMessage("1")}},
		{planned{OpSell, 0, 1}, "POST", "/api/markets/trade", &body{MarketID: markets[0], Side: "no", Type: "sell", Shares: json.RawMessage("1")}},
		{planned{OpSplit, 1, 1}, "POST", "/api/markets/split-merge", &body{MarketID: markets[1], Type: "split", Amount: json.RawMessage("1")}},
		{planned{OpMerge, 0, 0}, "POST", "/api/markets/split-merge", &body{MarketID: markets[0], Type: "merge", Amount: json.RawMessage("1")}},
		{planned{OpActive, 0, 0}, "GET", "/api/markets/active", nil},
		{planned{OpMe, 1, 0}, "GET", "/api/agents/me", nil},
		{planned{OpPoints, 0, 1}, "GET", "/api/points", nil},
		{planned{OpPortfolio, 1, 1}, "GET", "/api/portfolio", nil},
	} {
		t.Run(c.p.op.String(), func(t *testing.T) {
			req := fasthttp.AcquireRequest()
			defer fasthttp.ReleaseRequest(req)
			for _, first := range []planned{{OpBuy, 0, 0}, {OpActive, 0, 0}} {
				rs.fill(req, b, first)
				rs.fill(req, b, c.p)
				if m, u := string(req.Header.Method()), req.URI().String(); m != c.method || u != "http://127.0.0.1:9"+c.path {
					t.Errorf("after %s: %s %s, want %s http://127.0.0.1:9%s", first.op, m, u, c.method, c.path)
				}
				if a := string(req.Header.Peek(fasthttp.HeaderAuthorization)); a != b.authorization {
					t.Errorf("after %s: Authorization %q", first.op, a)
				}
				if c.want == nil {
					if len(req.Body()) != 0 || len(req.Header.ContentType()) != 0 {
						t.Errorf("after %s: body %q, content type %q; want neither", first.op, req.Body(), req.Header.ContentType())
					}
					continue
				}
				if ct := string(req.Header.ContentType()); ct != "application/json" {
					t.Errorf("after %s: content type %q", first.op, ct)
				}
				var got body
				if err := json.Unmarshal(req.Body(), &got); err != nil {
					t.Fatalf("after %s: body %q: %v", first.op, req.Body(), err)
				}
				if string(got.Shares) != string(c.want.Shares) || string(got.Amount) != string(c.want.Amount) ||
					got.MarketID != c.want.MarketID || got.Side != c.want.Side || got.Type != c.want.Type {
					t.Errorf("after %s: body %q, want %+v", first.op, req.Body(), *c.want)
				}
			}
		})
	}
}
