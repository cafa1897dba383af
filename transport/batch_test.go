package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"marketd/core/money"
)

// batchOut is a batch's answer: each item a trade answer or an error.
type batchOut struct {
	Results []map[string]any `json:"results"`
}

// TestTradeBatchHTTP: a batch mixing good and refused items across
// markets answers one result or error (with its code, without request_id)
// per item, in order; the good ones trade, the refused ones change
// nothing.
func TestTradeBatchHTTP(t *testing.T) {
	ts := newTestServer(t, Config{})
	sess, id := ts.registerAccount("bot")
	me := auth{session: sess}
	adm := ts.admin()
	m1, m2 := ts.createMarket(adm, nil).ID.String(), ts.createMarket(adm, nil).ID.String()
	items := []string{
		fmt.Sprintf(`{"market_id":%q,"side":"yes","type":"buy","shares":10}`, m1),
		fmt.Sprintf(`{"marketId":%q,"outcome":"no","side":"buy","amount":2}`, m2),
		fmt.Sprintf(`{"market_id":%q,"side":"no","type":"sell","shares":1}`, m1),
		fmt.Sprintf(`{"market_id":%q,"side":"yes","type":"buy","shares":1}`, uuid.NewString()),
		fmt.Sprintf(`{"market_id":%q,"side":"maybe","shares":1}`, m2),
		fmt.Sprintf(`{"market_id":%q,"side":"yes","type":"sell","shares":4}`, m1),
		fmt.Sprintf(`{"market_id":%q,"side":"yes","type":"buy","shares":1,"max_cost":0.000001}`, m2),
	}
	before := ts.kpBalance(id)
	r := ts.do("POST", "/api/markets/trades", me, `{"trades":[`+strings.Join(items, ",")+`]}`)
	var out batchOut
	ts.decode(r, http.StatusOK, &out)
	if len(out.Results) != len(items) {
		t.Fatalf("%d results for %d items: %s", len(out.Results), len(items), r.body)
	}
	wantCode := []string{"", "", "insufficient_shares", "market_not_found", "invalid_field", "", "slippage_exceeded"}
	var spent float64
	for i, res := range out.Results {
		code, _ := res["code"].(string)
		if code != wantCode[i] {
			t.Errorf("item %d: %v, want code %q", i, res, wantCode[i])
		}
		if _, ok := res["request_id"]; ok {
			t.Errorf("item %d carries a request_id: %v", i, res)
		}
		if code == "" {
			cost := res["cost"].(float64)
			if res["type"] == "sell" {
				cost = -cost
			}
			spent += cost
		} else if err := checkErrorCode(errorStatus(code), code, res["error"].(string)); err != nil {
			t.Errorf("item %d: %v", i, err)
		}
	}
	if res := out.Results[4]; res["field"] != "side" {
		t.Errorf("item 4: field %v, want side", res["field"])
	}
	if got := float64(ts.kpBalance(id)); fmt.Sprintf("%.6f", got/1e6) != fmt.Sprintf("%.6f", float64(before)/1e6-spent) {
		t.Errorf("balance %s after spending %.6f from %s", ts.kpBalance(id), spent, before)
	}

	for _, body := range []string{`{"trades":[]}`, `{}`, `{"trades":[` + strings.Repeat(items[0]+",", 20) + items[0] + `]}`} {
		ts.expectField(ts.do("POST", "/api/markets/trades", me, body), "trades")
	}
}

// errorStatus returns the listed status of a code.
func errorStatus(code string) int {
	for _, c := range errorCodes {
		if c.code == code {
			return c.status
		}
	}
	return 0
}

// TestTradeBatchRateLimit: a batch counts one request per item, and is
// admitted only when the window has room for all of them.
func TestTradeBatchRateLimit(t *testing.T) {
	ts := newTestServer(t, Config{})
	sess, _ := ts.registerAccount("bot")
	key := ts.newKey(sess, "trade") // standard tier: 60 a minute
	mkt := ts.createMarket(ts.admin(), nil).ID.String()
	item := fmt.Sprintf(`{"market_id":%q,"side":"yes","type":"buy","shares":1}`, mkt)
	batch := func(n int) string { return `{"trades":[` + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + `]}` }
	for i := range 2 {
		r := ts.do("POST", "/api/markets/trades", auth{key: key}, batch(20))
		ts.expect(r, http.StatusOK, "")
		if got, want := r.header.Get("X-RateLimit-Remaining"), fmt.Sprint(60-20*(i+1)); got != want {
			t.Fatalf("batch %d: X-RateLimit-Remaining %s, want %s", i, got, want)
		}
	}
	ts.expect(ts.do("POST", "/api/markets/trade", auth{key: key}, item), http.StatusOK, "")
	// 41 used: a batch of 20 does not fit, and is not counted.
	ts.expect(ts.do("POST", "/api/markets/trades", auth{key: key}, batch(20)), http.StatusTooManyRequests, "Rate limit exceeded")
	r := ts.do("POST", "/api/markets/trades", auth{key: key}, batch(19))
	ts.expect(r, http.StatusOK, "")
	if got := r.header.Get("X-RateLimit-Remaining"); got != "0" {
		t.Fatalf("after 60: X-RateLimit-Remaining %s", got)
	}
}

// TestTradeBatchIdempotent: a batch repeated with its key is answered from
// its items' records, byte for byte; a retry whose first try had refused an
// item answers the stored items from their records and runs the refused one
// again.
func TestTradeBatchIdempotent(t *testing.T) {
	ts := newTestServer(t, Config{})
	sess, id := ts.registerAccount("bot")
	me := auth{session: sess}
	mkt := ts.createMarket(ts.admin(), nil).ID.String()
	body := fmt.Sprintf(`{"trades":[{"market_id":%q,"side":"yes","type":"buy","shares":3},`+
		`{"market_id":%q,"side":"no","type":"sell","shares":2}]}`, mkt, mkt)
	first := ts.doHeaders("POST", "/api/markets/trades", me, body, withKey("batch-1"))
	var out batchOut
	ts.decode(first, http.StatusOK, &out)
	if out.Results[1]["code"] != "insufficient_shares" {
		t.Fatalf("item 1: %v", out.Results[1])
	}
	// Now the account holds "no" shares: the retry runs item 1, and answers
	// item 0 from its record.
	ts.trade(me, mkt, "no", "buy", "2")
	balance := ts.kpBalance(id)
	retry := ts.doHeaders("POST", "/api/markets/trades", me, body, withKey("batch-1"))
	var out2 batchOut
	ts.decode(retry, http.StatusOK, &out2)
	item0 := func(r response) []byte {
		var raw struct {
			Results []json.RawMessage `json:"results"`
		}
		if err := json.Unmarshal(r.body, &raw); err != nil {
			t.Fatal(err)
		}
		return raw.Results[0]
	}
	if !bytes.Equal(item0(retry), item0(first)) || out2.Results[1]["type"] != "sell" || retry.header.Get(HeaderReplayed) != "" {
		t.Fatalf("retry: %s (replayed %q); first %s", retry.body, retry.header.Get(HeaderReplayed), first.body)
	}
	if got, want := ts.kpBalance(id), balance+jsonAmountOf(t, out2.Results[1]["cost"]); got != want {
		t.Fatalf("balance %s after the retry, want %s: item 0 ran again", got, want)
	}
	again := ts.doHeaders("POST", "/api/markets/trades", me, body, withKey("batch-1"))
	if !bytes.Equal(again.body, retry.body) || again.header.Get(HeaderReplayed) != "true" {
		t.Fatalf("third try: %s replayed %q; want %s replayed", again.body, again.header.Get(HeaderReplayed), retry.body)
	}
	ts.expect(ts.doHeaders("POST", "/api/markets/trades", me, strings.Replace(body, `"shares":3`, `"shares":4`, 1), withKey("batch-1")),
		http.StatusUnprocessableEntity, "Idempotency-Key reused with a different request")
}

// jsonAmountOf returns a decoded JSON number as an amount (answers carry
// at most 6 decimals, which a float64 holds exactly enough to round back).
func jsonAmountOf(t *testing.T, v any) money.Amount {
	t.Helper()
	f, ok := v.(float64)
	if !ok {
		t.Fatalf("%v is not a number", v)
	}
	a, err := money.Parse(strconv.FormatFloat(f, 'f', 6, 64))
	if err != nil {
		t.Fatal(err)
	}
	return a
}
