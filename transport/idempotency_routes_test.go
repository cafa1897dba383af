package transport

import (
	"bytes"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
)

// secretRoutes are the state-changing routes whose answers hold a secret
// or set a cookie: they refuse an Idempotency-Key (docs/API.md,
// "Idempotent requests").
var secretRoutes = map[routeKey]bool{
	{fasthttp.MethodPost, "/api/auth/register"}:    true,
	{fasthttp.MethodPost, "/api/auth/login"}:       true,
	{fasthttp.MethodPost, "/api/auth/logout"}:      true,
	{fasthttp.MethodPost, "/api/auth/password"}:    true,
	{fasthttp.MethodPost, "/api/keys"}:             true,
	{fasthttp.MethodPost, "/api/keys/{id}/rotate"}: true,
}

// unstoredRoutes are the state-changing routes that do not store answers
// yet: their operations' records do not hold the caller's account, where
// an entry is kept (docs/API.md, "Idempotent requests"). They refuse the
// key as the secret ones do.
var unstoredRoutes = map[routeKey]bool{
	{fasthttp.MethodDelete, "/api/keys/{id}"}:                   true,
	{fasthttp.MethodPost, "/api/markets"}:                       true,
	{fasthttp.MethodPost, "/api/oracle/propose"}:                true,
	{fasthttp.MethodPost, "/api/oracle/challenge"}:              true,
	{fasthttp.MethodPost, "/api/oracle/vote"}:                   true,
	{fasthttp.MethodPost, "/api/admin/settle"}:                  true,
	{fasthttp.MethodPost, "/api/admin/deposits/{id}/confirm"}:   true,
	{fasthttp.MethodPost, "/api/admin/deposits/{id}/reject"}:    true,
	{fasthttp.MethodPost, "/api/admin/withdrawals/{id}/sent"}:   true,
	{fasthttp.MethodPost, "/api/admin/withdrawals/{id}/failed"}: true,
	{fasthttp.MethodPost, "/api/admin/backup"}:                  true,
}

// idemState is what a repeat must leave as it was: the log's last record
// and the caller's account as the engine shows it.
type idemState struct {
	lastSeq uint64
	account core.AccountView
}

func (ts *testServer) idemStateOf(id uuid.UUID) idemState {
	ts.t.Helper()
	v, ok := ts.eng.Account(id)
	if !ok {
		ts.t.Fatalf("account %s not found", id)
	}
	return idemState{lastSeq: ts.log.LastSeq(), account: v}
}

// TestIdempotencyEveryRoute walks the route table: every state-changing
// route either stores its answer under an Idempotency-Key (a repeat
// answers the same bytes with Idempotent-Replayed: true, writes no record
// and changes nothing) or, when its answer holds a secret or sets a
// cookie, refuses the key with 400 idempotency_not_supported and changes
// nothing. Reads ignore the key.
func TestIdempotencyEveryRoute(t *testing.T) {
	ts := newTestServer(t, Config{})
	sess, id := ts.registerAccount("walker")
	me := auth{session: sess}
	refSess, _ := ts.registerAccount("referrer")
	var code struct {
		Code string `json:"code"`
	}
	ts.decode(ts.do("GET", "/api/referral/code", auth{session: refSess}, ""), http.StatusOK, &code)
	admSess := ts.admin()
	mkt := ts.createMarket(admSess, nil).ID
	trade := `{"market_id":"` + mkt + `","side":"yes","type":"buy","shares":2}`

	adm := auth{session: admSess}
	var deposit depositOut
	// The stored routes in an order in which each changes something;
	// after, when not nil, runs once the case is done.
	stored := []struct {
		method, path, body string
		after              func(first response)
	}{
		{"PATCH", "/api/settings", `{"theme":"dark"}`, nil},
		{"POST", "/api/profile/persona", `{"persona":"a careful bot"}`, nil},
		{"POST", "/api/profile/accept-tos", `{"version":"v1"}`, nil},
		{"POST", "/api/referral/apply", `{"code":"` + code.Code + `"}`, nil},
		{"PATCH", "/api/notifications", `{"all":true}`, nil},
		{"POST", pathTrade, trade, nil},
		{"POST", pathSplitMerge, `{"market_id":"` + mkt + `","type":"split","amount":3}`, nil},
		{"POST", pathBatch, `{"trades":[` + trade + `,` + trade + `]}`, nil},
		{"POST", "/api/wallet", `{"address":"` + walletA + `"}`, nil},
		{"POST", "/api/profile/trading-mode", `{"mode":"usdc"}`, nil},
		{"POST", "/api/token/deposit", `{"amount":50,"tx_hash":"` + hash64("a") + `"}`, func(first response) {
			ts.decode(first, http.StatusOK, &deposit)
			ts.expect(ts.do("POST", "/api/admin/deposits/"+deposit.Deposit.ID+"/confirm", adm, `{"amount":50}`), http.StatusOK, "")
		}},
		{"POST", "/api/token/withdraw", `{"amount":50}`, func(first response) {
			var w struct {
				Withdrawal struct {
					ID string `json:"id"`
				} `json:"withdrawal"`
			}
			ts.decode(first, http.StatusOK, &w)
			ts.expect(ts.do("POST", "/api/admin/withdrawals/"+w.Withdrawal.ID+"/sent", adm, `{"tx_hash":"`+hash64("b")+`"}`), http.StatusOK, "")
		}},
		{"DELETE", "/api/wallet", "", nil},
	}
	covered := map[routeKey]bool{}
	for i, tc := range stored {
		k := routeKey{tc.method, tc.path}
		covered[k] = true
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			ts := ts.sub(t)
			key := "walk-" + string(rune('a'+i))
			before := ts.idemStateOf(id)
			first := ts.doHeaders(tc.method, tc.path, me, tc.body, withKey(key))
			ts.expect(first, http.StatusOK, "")
			if first.header.Get(HeaderReplayed) != "" {
				t.Errorf("first answer marked %s", HeaderReplayed)
			}
			changed := ts.idemStateOf(id)
			if changed.lastSeq == before.lastSeq {
				t.Fatalf("first request wrote no record: the case must change something")
			}
			again := ts.doHeaders(tc.method, tc.path, me, tc.body, withKey(key))
			if again.status != http.StatusOK || !bytes.Equal(again.body, first.body) || again.header.Get(HeaderReplayed) != "true" {
				t.Fatalf("repeat: %d %s (replayed %q); want 200, %s, replayed true", again.status, again.body,
					again.header.Get(HeaderReplayed), first.body)
			}
			if after := ts.idemStateOf(id); !reflect.DeepEqual(after, changed) {
				t.Fatalf("the repeat changed the state:\n got %+v\nwant %+v", after, changed)
			}
			other := tc.body + " "
			if tc.body == "" {
				other = "{}"
			}
			ts.expectError(ts.doHeaders(tc.method, tc.path, me, other, withKey(key)),
				http.StatusUnprocessableEntity, "Idempotency-Key reused with a different request", "")
			if after := ts.idemStateOf(id); !reflect.DeepEqual(after, changed) {
				t.Fatalf("the reused key changed the state")
			}
			if tc.after != nil {
				tc.after(first)
			}
		})
	}

	for _, rt := range ts.srv.routes() {
		k := routeKey{rt.method, rt.path}
		switch support := idemSupportOf(&rt); {
		case rt.method == fasthttp.MethodGet || rt.path == pathQuote:
			if support != idemIgnored {
				t.Errorf("%s %s: a read does not ignore the key", rt.method, rt.path)
			}
		case secretRoutes[k]:
			if support != idemRefused {
				t.Errorf("%s %s: answers hold a secret, yet the key is not refused", rt.method, rt.path)
			}
			path := strings.ReplaceAll(rt.path, "{id}", uuid.NewString())
			before := ts.idemStateOf(id)
			r := ts.doHeaders(rt.method, path, me, `{}`, withKey("walk-secret"))
			ts.expectError(r, http.StatusBadRequest, "Idempotency-Key is not accepted on this endpoint", "")
			if after := ts.idemStateOf(id); !reflect.DeepEqual(after, before) {
				t.Errorf("%s %s: the refused key changed the state", rt.method, rt.path)
			}
		case unstoredRoutes[k]:
			if support != idemRefused {
				t.Errorf("%s %s: listed as refusing the key, yet support %d", rt.method, rt.path, support)
			}
			path := strings.ReplaceAll(rt.path, "{id}", uuid.NewString())
			before := ts.idemStateOf(id)
			r := ts.doHeaders(rt.method, path, adm, `{}`, withKey("walk-unstored"))
			ts.expectError(r, http.StatusBadRequest, "Idempotency-Key is not accepted on this endpoint", "")
			if after := ts.idemStateOf(id); !reflect.DeepEqual(after, before) {
				t.Errorf("%s %s: the refused key changed the state", rt.method, rt.path)
			}
		case !covered[k]:
			t.Errorf("%s %s: state-changing route with no case here (support %d)", rt.method, rt.path, support)
		}
	}
}
