package transport

import (
	"bytes"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
)

// routeKey names a route by method and path pattern.
type routeKey struct{ method, path string }

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

// unstoredRoutes are the state-changing routes that store no answer: a
// backup writes no record, its effect is files outside the state
// (docs/API.md, "Idempotent requests"). They refuse the key as the secret
// ones do.
var unstoredRoutes = map[routeKey]bool{
	{fasthttp.MethodPost, "/api/admin/backup"}: true,
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
	ts, clk := newClockServer(t, Config{}, nil)
	sess, id := ts.registerAccount("walker")
	me := auth{session: sess}
	refSess, refID := ts.registerAccount("referrer")
	voterSess, voterID := ts.registerAccount("voter")
	var code struct {
		Code string `json:"code"`
	}
	ts.decode(ts.do("GET", "/api/referral/code", auth{session: refSess}, ""), http.StatusOK, &code)
	admSess, admID := ts.adminWithID()
	mkt := ts.createMarket(admSess, nil).ID.String()
	trade := `{"market_id":"` + mkt + `","side":"yes","type":"buy","shares":2}`
	// A market that closes in an hour, for the oracle's routes once the
	// clock has passed it.
	closing := ts.createMarket(admSess, map[string]any{"closes_at": iso(clk.Now().Add(time.Hour))}).ID.String()

	adm := auth{session: admSess}
	ref, voter := auth{session: refSess}, auth{session: voterSess}
	owners := map[auth]uuid.UUID{me: id, adm: admID, ref: refID, voter: voterID}
	ts.newKey(sess, "read")
	var keyID string
	for _, k := range ts.do("GET", "/api/keys", me, "").json(t)["keys"].([]any) {
		keyID = k.(map[string]any)["id"].(string)
	}
	// IDs the cases learn from earlier ones, put in paths at run time.
	ids := map[string]string{"{key}": keyID}
	transferID := func(name string) func(first response) {
		return func(first response) {
			var out depositOut
			ts.decode(first, http.StatusOK, &out)
			ids[name] = out.Deposit.ID + out.Withdrawal.ID
		}
	}
	// The stored routes in an order in which each changes something: by
	// the caller a (me when zero) whose account holds the answer, path's
	// {names} taken from ids; after, when not nil, runs once the case is
	// done.
	stored := []struct {
		method, path, body string
		a                  auth
		after              func(first response)
	}{
		{"PATCH", "/api/settings", `{"theme":"dark"}`, auth{}, nil},
		{"POST", "/api/profile/persona", `{"persona":"a careful bot"}`, auth{}, nil},
		{"POST", "/api/profile/accept-tos", `{"version":"v1"}`, auth{}, nil},
		{"POST", "/api/referral/apply", `{"code":"` + code.Code + `"}`, auth{}, nil},
		{"PATCH", "/api/notifications", `{"all":true}`, auth{}, nil},
		{"POST", pathTrade, trade, auth{}, nil},
		{"POST", pathSplitMerge, `{"market_id":"` + mkt + `","type":"split","amount":3}`, auth{}, nil},
		{"POST", pathBatch, `{"trades":[` + trade + `,` + trade + `]}`, auth{}, nil},
		{"DELETE", "/api/keys/{key}", "", auth{}, nil},
		{"POST", "/api/markets", `{"title":"Will it snow?","description":"Resolves yes if it snows.","category":"weather",` +
			`"closes_at":"` + iso(later(24*time.Hour)) + `"}`, adm, nil},
		{"POST", "/api/wallet", `{"address":"` + walletA + `"}`, auth{}, nil},
		{"POST", "/api/profile/trading-mode", `{"mode":"usdc"}`, auth{}, nil},
		{"POST", "/api/token/deposit", `{"amount":150,"tx_hash":"` + hash64("a") + `"}`, auth{}, transferID("{deposit}")},
		{"POST", "/api/admin/deposits/{deposit}/confirm", `{"amount":150}`, adm, nil},
		{"POST", "/api/token/withdraw", `{"amount":50}`, auth{}, transferID("{withdrawal}")},
		{"POST", "/api/admin/withdrawals/{withdrawal}/sent", `{"tx_hash":"` + hash64("b") + `"}`, adm, func(response) {
			var out depositOut
			ts.decode(ts.do("POST", "/api/token/withdraw", me, `{"amount":50}`), http.StatusOK, &out)
			ids["{withdrawal}"] = out.Withdrawal.ID
		}},
		{"POST", "/api/admin/withdrawals/{withdrawal}/failed", "", adm, func(response) {
			var out depositOut
			ts.decode(ts.do("POST", "/api/token/deposit", me, `{"amount":5,"tx_hash":"`+hash64("c")+`"}`), http.StatusOK, &out)
			ids["{deposit}"] = out.Deposit.ID
		}},
		{"POST", "/api/admin/deposits/{deposit}/reject", "", adm, func(response) {
			var out depositOut
			ts.decode(ts.do("POST", "/api/token/withdraw", me, `{"amount":100}`), http.StatusOK, &out)
			ts.expect(ts.do("POST", "/api/admin/withdrawals/"+out.Withdrawal.ID+"/sent", adm, `{"tx_hash":"`+hash64("d")+`"}`), http.StatusOK, "")
		}},
		{"DELETE", "/api/wallet", "", auth{}, func(response) { clk.Advance(2 * time.Hour) }},
		{"POST", "/api/oracle/propose", `{"market_id":"` + closing + `","outcome":"yes"}`, auth{}, func(first response) {
			var p proposalOut
			ts.decode(first, http.StatusOK, &p)
			ids["{proposal}"] = p.ID
		}},
		{"POST", "/api/oracle/challenge", `{"proposal_id":"{proposal}"}`, ref, nil},
		{"POST", "/api/oracle/vote", `{"proposal_id":"{proposal}","outcome":"no"}`, voter, nil},
		// Last: it resolves the market the trades above hold.
		{"POST", "/api/admin/settle", `{"market_id":"` + mkt + `","outcome":"yes"}`, adm, nil},
	}
	pattern := strings.NewReplacer("{key}", "{id}", "{deposit}", "{id}", "{withdrawal}", "{id}")
	covered := map[routeKey]bool{}
	for i, tc := range stored {
		k := routeKey{tc.method, pattern.Replace(tc.path)}
		covered[k] = true
		t.Run(tc.method+" "+k.path, func(t *testing.T) {
			ts := ts.sub(t)
			a := tc.a
			if a == (auth{}) {
				a = me
			}
			owner := owners[a]
			path, body := tc.path, tc.body
			for name, v := range ids {
				path = strings.ReplaceAll(path, name, v)
				body = strings.ReplaceAll(body, name, v)
			}
			key := "walk-" + string(rune('a'+i))
			before := ts.idemStateOf(owner)
			first := ts.doHeaders(tc.method, path, a, body, withKey(key))
			status := http.StatusOK
			if k == (routeKey{fasthttp.MethodPost, "/api/markets"}) {
				status = http.StatusCreated
			}
			ts.expect(first, status, "")
			if first.header.Get(HeaderReplayed) != "" {
				t.Errorf("first answer marked %s", HeaderReplayed)
			}
			changed := ts.idemStateOf(owner)
			if changed.lastSeq == before.lastSeq {
				t.Fatalf("first request wrote no record: the case must change something")
			}
			again := ts.doHeaders(tc.method, path, a, body, withKey(key))
			if again.status != status || !bytes.Equal(again.body, first.body) || again.header.Get(HeaderReplayed) != "true" {
				t.Fatalf("repeat: %d %s (replayed %q); want 200, %s, replayed true", again.status, again.body,
					again.header.Get(HeaderReplayed), first.body)
			}
			if after := ts.idemStateOf(owner); !reflect.DeepEqual(after, changed) {
				t.Fatalf("the repeat changed the state:\n got %+v\nwant %+v", after, changed)
			}
			other := body + " "
			if body == "" {
				other = "{}"
			}
			ts.expectError(ts.doHeaders(tc.method, path, a, other, withKey(key)),
				http.StatusUnprocessableEntity, "Idempotency-Key reused with a different request", "")
			if after := ts.idemStateOf(owner); !reflect.DeepEqual(after, changed) {
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
