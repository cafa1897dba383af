package transport

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"marketd/core/money"
)

// TestReferralEndpoints: a code per account; apply with a read or a trade
// key, once, never one's own, no cycle; both get the bonus and a
// notification; stats count the referees and the bonus earned as referrer.
func TestReferralEndpoints(t *testing.T) {
	ts := newTestServer(t, Config{})
	alice, bob, carol := ts.register("alice"), ts.register("bobby"), ts.register("carol")
	code := func(session string) string {
		r := ts.do("GET", "/api/referral/code", auth{session: session}, "")
		ts.expect(r, http.StatusOK, "")
		m := decodeExact(t, r.body)
		checkShape(t, "referral code", m, map[string]shape{"code": sString})
		if c := m["code"].(string); len(c) != 8 {
			t.Fatalf("code %q", c)
		}
		return m["code"].(string)
	}
	aliceCode := code(alice)
	if aliceCode == code(bob) {
		t.Fatal("two accounts share a code")
	}
	apply := func(a auth, body string) response { return ts.do("POST", "/api/referral/apply", a, body) }

	tests := []struct {
		name   string
		a      auth
		body   string
		status int
		msg    string
	}{
		{"no body", auth{session: bob}, ``, 400, ""},
		{"missing code", auth{session: bob}, `{}`, 400, "code: required"},
		{"wrong type", auth{session: bob}, `{"code":12345678}`, 400, ""},
		{"unknown field", auth{session: bob}, `{"code":"ABCDEFGH","x":1}`, 400, ""},
		{"short code", auth{session: bob}, `{"code":"ABC"}`, 400, "code: must be 8 characters"},
		{"unknown code", auth{session: bob}, `{"code":"ZZZZZZZZ"}`, 404, "Referral code not found"},
		{"own code", auth{session: alice}, `{"code":"` + aliceCode + `"}`, 400, "Cannot apply your own referral code"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := ts.sub(t)
			r := apply(tc.a, tc.body)
			ts.expect(r, tc.status, tc.msg)
		})
	}
	if p := ts.profile(auth{session: bob}); p.Agent.Balance != money.Units(1000) {
		t.Fatalf("refused referrals moved bob's balance to %s", p.Agent.Balance)
	}

	// A trade-only key works, and so does a read-only one.
	r := apply(auth{key: ts.newKey(bob, "trade")}, `{"code":"`+aliceCode+`"}`)
	ts.expect(r, http.StatusOK, "")
	m := decodeExact(t, r.body)
	checkShape(t, "apply", m, map[string]shape{"code": sString, "referrer_id": sUUID, "referrer_name": sString,
		"bonus": sNumber, "balance_after": sNumber})
	if m["referrer_name"] != "alice" || m["bonus"] != json.Number("100") || m["balance_after"] != json.Number("1100") {
		t.Fatalf("apply answered %s", r.body)
	}
	ts.expect(apply(auth{key: ts.newKey(carol, "read")}, `{"code":"`+aliceCode+`"}`), http.StatusOK, "")
	ts.expect(apply(auth{session: bob}, `{"code":"`+code(carol)+`"}`), 400, "Referral already applied")
	ts.expect(apply(auth{session: alice}, `{"code":"`+code(bob)+`"}`), 400, "Cannot apply the code of an account you referred")

	r = ts.do("GET", "/api/referral/stats", auth{session: alice}, "")
	ts.expect(r, http.StatusOK, "")
	m = decodeExact(t, r.body)
	checkShape(t, "stats", m, map[string]shape{"code": sString, "referred_count": sInt, "bonus_earned": sNumber, "vig_earned": sNumber})
	if m["code"] != aliceCode || m["referred_count"] != json.Number("2") || m["bonus_earned"] != json.Number("200") || m["vig_earned"] != json.Number("0") {
		t.Fatalf("alice's stats %s", r.body)
	}
	n := ts.notes(auth{session: alice}, "")
	if n.Count != 2 || n.Unread != 2 || n.Notifications[0].Kind != "referral_applied" || n.Notifications[0].Data["name"] != "carol" {
		t.Fatalf("alice's notifications %+v", n)
	}
}

type noteOut struct {
	ID        uint64         `json:"id"`
	Kind      string         `json:"kind"`
	Message   string         `json:"message"`
	Data      map[string]any `json:"data"`
	Read      bool           `json:"read"`
	CreatedAt string         `json:"created_at"`
}

type notesOut struct {
	Count         int       `json:"count"`
	Unread        int       `json:"unread"`
	Notifications []noteOut `json:"notifications"`
}

func (ts *testServer) notes(a auth, query string) notesOut {
	ts.t.Helper()
	r := ts.do("GET", "/api/notifications"+query, a, "")
	ts.expect(r, http.StatusOK, "")
	m := decodeExact(ts.t, r.body)
	checkShape(ts.t, "notifications", m, map[string]shape{"count": sInt, "unread": sInt, "notifications": sArray})
	for _, n := range m["notifications"].([]any) {
		checkShape(ts.t, "notification", n, map[string]shape{"id": sInt, "kind": sString, "message": sString,
			"data": sObject, "read": sBool, "created_at": sTime})
	}
	var out notesOut
	ts.decode(r, http.StatusOK, &out)
	return out
}

// TestNotificationEndpoints: a holder hears of the close and the
// settlement; filters and limit; PATCH by ids and all, with its errors.
func TestNotificationEndpoints(t *testing.T) {
	ts, clk := newClockServer(t, Config{}, nil)
	admin := ts.admin()
	mkt := ts.createMarket(admin, map[string]any{"title": "Rain"}).ID.String()
	bob := ts.register("bobby")
	ts.trade(auth{session: bob}, mkt, "yes", "buy", "10")
	clk.Advance(25 * time.Hour) // past closes_at, within the sessions' 7 days
	if _, err := ts.srv.eng.CloseDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	ts.expect(ts.do("POST", "/api/admin/settle", auth{session: admin}, `{"market_id":"`+mkt+`","outcome":"yes"}`), 200, "")

	n := ts.notes(auth{session: bob}, "")
	if n.Count != 2 || n.Unread != 2 || n.Notifications[0].Kind != "market_settled" || n.Notifications[1].Kind != "market_closed" {
		t.Fatalf("notifications %+v", n)
	}
	settled := n.Notifications[0]
	if settled.Data["market_id"] != mkt || settled.Data["title"] != "Rain" || settled.Data["outcome"] != "yes" ||
		settled.Data["amount"] != 10.0 || settled.Data["currency"] != "kp" ||
		settled.Message != `Market "Rain" resolved yes; your payout: 10 KP` {
		t.Fatalf("settled notification %+v", settled)
	}
	if n := ts.notes(auth{session: bob}, "?limit=1"); n.Count != 2 || len(n.Notifications) != 1 {
		t.Fatalf("limit=1: %+v", n)
	}
	patch := func(body string) response { return ts.do("PATCH", "/api/notifications", auth{session: bob}, body) }
	for _, tc := range []struct {
		body string
		msg  string
	}{
		{`{}`, "Give ids or all"},
		{`{"ids":[1],"all":true}`, "Give either ids or all, not both"},
		{`{"all":false}`, "all: must be true"},
		{`{"ids":[]}`, "ids: must not be empty"},
		{`{"ids":[-1]}`, ""},
		{`{"ids":"1"}`, ""},
		{`{"ids":[1],"x":1}`, ""},
	} {
		ts.expect(patch(tc.body), 400, tc.msg)
	}
	for _, q := range []string{"?unread=yes", "?limit=0", "?limit=1001"} {
		ts.expect(ts.do("GET", "/api/notifications"+q, auth{session: bob}, ""), 400, "")
	}
	r := patch(fmt.Sprintf(`{"ids":[%d, 99]}`, settled.ID))
	ts.expect(r, 200, "")
	if m := decodeExact(t, r.body); m["updated"] != json.Number("1") {
		t.Fatalf("PATCH ids: %s", r.body)
	}
	if n := ts.notes(auth{key: ts.newKey(bob, "read")}, "?unread=true"); n.Count != 1 || n.Unread != 1 || n.Notifications[0].Kind != "market_closed" {
		t.Fatalf("unread after one read: %+v", n)
	}
	r = ts.do("PATCH", "/api/notifications", auth{key: ts.newKey(bob, "read")}, `{"all":true}`)
	ts.expect(r, 200, "")
	if m := decodeExact(t, r.body); m["updated"] != json.Number("1") {
		t.Fatalf("PATCH all: %s", r.body)
	}
	if n := ts.notes(auth{session: bob}, ""); n.Unread != 0 || n.Count != 2 || !n.Notifications[1].Read {
		t.Fatalf("after all read: %+v", n)
	}
}

// TestVigEndpoint: the creator's accrual before settlement, what was paid
// after it, and the currency parameter.
func TestVigEndpoint(t *testing.T) {
	ts := newTestServer(t, Config{})
	admin := ts.admin()
	mkt := ts.createMarket(admin, map[string]any{"title": "Vig"}).ID.String()
	bob := ts.register("bobby")
	ts.trade(auth{session: bob}, mkt, "yes", "buy", "100")
	vig := func(query string) map[string]any {
		r := ts.do("GET", "/api/vig"+query, auth{session: admin}, "")
		ts.expect(r, http.StatusOK, "")
		m := decodeExact(t, r.body)
		checkShape(t, "vig", m, map[string]shape{"currency": sString, "total": sNumber, "accrued": sNumber,
			"from_markets": sNumber, "from_referrals": sNumber, "entries": sArray})
		for _, e := range m["entries"].([]any) {
			checkShape(t, "vig entry", e, map[string]shape{"market_id": sUUID, "currency": sString, "role": sString,
				"accrued": sNumber, "paid": sNumber, "paid_at": sTimeOrNull})
		}
		return m
	}
	before := vig("")
	entries := before["entries"].([]any)
	if before["currency"] != "kp" || before["total"] != json.Number("0") || before["accrued"] == json.Number("0") || len(entries) != 1 ||
		entries[0].(map[string]any)["role"] != "creator" || entries[0].(map[string]any)["paid_at"] != nil {
		t.Fatalf("before settlement: %v", before)
	}
	ts.expect(ts.do("POST", "/api/admin/settle", auth{session: admin}, `{"market_id":"`+mkt+`","outcome":"no"}`), 200, "")
	after := vig("?currency=kp")
	e := after["entries"].([]any)[0].(map[string]any)
	if after["accrued"] != json.Number("0") || after["total"] == json.Number("0") || after["total"] != after["from_markets"] ||
		e["paid"] != after["total"] || e["accrued"] != before["accrued"] || e["paid_at"] == nil {
		t.Fatalf("after settlement: %v", after)
	}
	if u := vig("?currency=usdc"); u["currency"] != "usdc" || len(u["entries"].([]any)) != 0 {
		t.Fatalf("usdc: %v", u)
	}
	ts.expect(ts.do("GET", "/api/vig?currency=eur", auth{session: admin}, ""), 400, "currency: must be kp or usdc")
}
