package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/uuid"
)

type fillListOut struct {
	Count  int              `json:"count"`
	Limit  int              `json:"limit"`
	Offset int              `json:"offset"`
	Trades []map[string]any `json:"trades"`
}

// TestFillsHTTP: GET /api/trades lists the caller's trades, newest first,
// paged and by market, past the profile's 20; GET /api/trades/{id} finds
// one of the caller's own trades only.
func TestFillsHTTP(t *testing.T) {
	ts := newTestServer(t, Config{})
	sess, _ := ts.registerAccount("bot")
	other := ts.register("other")
	me := auth{session: sess}
	adm := ts.admin()
	m1, m2 := ts.createMarket(adm, nil).ID.String(), ts.createMarket(adm, nil).ID.String()
	var ids []string
	for i := range 25 {
		m := m1
		if i%5 == 0 {
			m = m2
		}
		ids = append(ids, ts.trade(me, m, "yes", "buy", "0.5").TradeID.String())
	}
	othersTrade := ts.trade(auth{session: other}, m1, "no", "buy", "1").TradeID.String()

	var all fillListOut
	ts.decode(ts.do("GET", "/api/trades?limit=500", me, ""), http.StatusOK, &all)
	if all.Count != 25 || len(all.Trades) != 25 || all.Trades[0]["trade_id"] != ids[24] || all.Trades[24]["trade_id"] != ids[0] {
		t.Fatalf("all: count %d, %d trades, first %v last %v", all.Count, len(all.Trades), all.Trades[0]["trade_id"], all.Trades[24]["trade_id"])
	}
	var page fillListOut
	ts.decode(ts.do("GET", "/api/trades?limit=10&offset=20", me, ""), http.StatusOK, &page)
	if page.Count != 25 || len(page.Trades) != 5 || page.Trades[0]["trade_id"] != ids[4] {
		t.Fatalf("page: %+v", page)
	}
	var byMarket fillListOut
	ts.decode(ts.do("GET", "/api/trades?market_id="+m2, me, ""), http.StatusOK, &byMarket)
	if byMarket.Count != 5 || byMarket.Trades[0]["trade_id"] != ids[20] || byMarket.Trades[0]["market_id"] != m2 {
		t.Fatalf("by market: %+v", byMarket)
	}
	var one map[string]any
	ts.decode(ts.do("GET", "/api/trades/"+ids[3], me, ""), http.StatusOK, &one)
	if fmt.Sprint(one) != fmt.Sprint(all.Trades[21]) {
		t.Fatalf("GET /api/trades/{id} = %v, listed as %v", one, all.Trades[21])
	}
	ts.expect(ts.do("GET", "/api/trades/"+othersTrade, me, ""), http.StatusNotFound, "Trade not found")
	ts.expect(ts.do("GET", "/api/trades/"+uuid.NewString(), me, ""), http.StatusNotFound, "Trade not found")
	ts.expectField(ts.do("GET", "/api/trades/nope", me, ""), "id")
	ts.expectField(ts.do("GET", "/api/trades?limit=0", me, ""), "limit")
	ts.expectField(ts.do("GET", "/api/trades?market_id=x", me, ""), "market_id")
	ts.expect(ts.do("GET", "/api/trades", auth{}, ""), http.StatusUnauthorized, "Authentication required")
}

// TestIdempotencyLookup: GET /api/idempotency?key= answers what a key of
// the caller's stored, or 404, so that a bot whose request timed out can
// tell whether it happened.
func TestIdempotencyLookup(t *testing.T) {
	ts := newTestServer(t, Config{})
	sess, _ := ts.registerAccount("bot")
	me := auth{session: sess}
	mkt := ts.createMarket(ts.admin(), nil).ID.String()
	key := "order 7/a?b"
	r := ts.doHeaders("POST", "/api/markets/trade", me, fmt.Sprintf(`{"market_id":%q,"side":"yes","shares":2}`, mkt), withKey(key))
	ts.expect(r, http.StatusOK, "")
	var got struct {
		Key   string `json:"idempotency_key"`
		Items []struct {
			Index  int             `json:"index"`
			Status int             `json:"status"`
			Answer json.RawMessage `json:"answer"`
		} `json:"items"`
	}
	ts.decode(ts.do("GET", "/api/idempotency?key="+url.QueryEscape(key), me, ""), http.StatusOK, &got)
	if got.Key != key || len(got.Items) != 1 || got.Items[0].Status != 200 || !bytes.Equal(got.Items[0].Answer, r.body) {
		t.Fatalf("lookup: %+v; the answer was %s", got, r.body)
	}
	ts.expect(ts.do("GET", "/api/idempotency?key=other", me, ""), http.StatusNotFound, "Idempotency-Key not found")
	ts.expect(ts.do("GET", "/api/idempotency?key="+url.QueryEscape(key), auth{session: ts.register("someone")}, ""),
		http.StatusNotFound, "Idempotency-Key not found")
	ts.expectField(ts.do("GET", "/api/idempotency", me, ""), "key")
}
