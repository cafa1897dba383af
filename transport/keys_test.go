package transport

import (
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
)

// Tests of the API key endpoints and of GET /api/agents/me (docs/API.md,
// their sections).

// newKeyShape is the answer of creating or rotating a key (docs/API.md,
// "POST /api/keys").
var newKeyShape = map[string]shape{
	"id": sUUID, "name": sString, "key": sString, "key_prefix": sString, "scopes": sStrings,
	"expires_at": sTimeOrNull, "rate_limit_tier": sString, "created_at": sTime,
}

// listedKeyShape is an item of GET /api/keys: never the key or its hash.
var listedKeyShape = map[string]shape{
	"id": sUUID, "name": sString, "key_prefix": sString, "scopes": sStrings, "rate_limit_tier": sString,
	"total_requests": sInt, "status": sString, "created_at": sTime, "expires_at": sTimeOrNull,
	"last_used_at": sTimeOrNull,
}

// checkNewKey checks an answer of key creation or rotation against the
// stored key: the form of the secret, its prefix, and that only its
// SHA-256 is kept.
func checkNewKey(t *testing.T, ts *testServer, m map[string]any) {
	t.Helper()
	checkShape(t, "new key", m, newKeyShape)
	key := jsonStr(t, m, "key")
	if !keyRE.MatchString(key) {
		t.Fatalf("key %q is not svc_live_ and 32 lowercase hex digits", key)
	}
	if p := jsonStr(t, m, "key_prefix"); p != key[:17] {
		t.Errorf("key_prefix %q, want the key's first 17 characters %q", p, key[:17])
	}
	k, ok := ts.eng.KeyByHash(sha256Of(key))
	if !ok || k.ID.String() != jsonStr(t, m, "id") {
		t.Fatalf("no key %s stored under the SHA-256 of the key", m["id"])
	}
}

// TestCreateKey creates keys at the bounds of every field, by a user and
// by an admin (the only one who may ask for the admin scope or a tier
// other than the default), and checks each answer against what was asked
// and what was stored.
func TestCreateKey(t *testing.T) {
	ts, _ := newSteppedServer(t, Config{})
	adminSession, _ := ts.adminWithID()
	day := 24 * time.Hour
	tests := []struct {
		name      string
		admin     bool
		body      string
		wantName  string
		scopes    []string
		tier      string
		expiresAt string // "" for null
	}{
		{"read", false, `{"name":"bot","scopes":["read"]}`, "bot", []string{"read"}, "standard", ""},
		{"read and trade", false, `{"name":"bot","scopes":["trade","read"]}`, "bot", []string{"read", "trade"}, "standard", ""},
		{"repeated scope", false, `{"name":"bot","scopes":["read","read"]}`, "bot", []string{"read"}, "standard", ""},
		{"one-character name", false, `{"name":"b","scopes":["read"]}`, "b", []string{"read"}, "standard", ""},
		{"64-rune name", false, `{"name":"` + strings.Repeat("é", 64) + `","scopes":["read"]}`, strings.Repeat("é", 64), []string{"read"}, "standard", ""},
		{"expires in 1 day", false, `{"name":"bot","scopes":["read"],"expires_in_days":1}`, "bot", []string{"read"}, "standard", apiTime(stepClockStart.Add(day))},
		{"expires in 3650 days", false, `{"name":"bot","scopes":["read"],"expires_in_days":3650}`, "bot", []string{"read"}, "standard", apiTime(stepClockStart.Add(3650 * day))},
		{"default tier asked for", false, `{"name":"bot","scopes":["read"],"rate_limit_tier":"standard"}`, "bot", []string{"read"}, "standard", ""},
		{"null tier is the default", false, `{"name":"bot","scopes":["read"],"rate_limit_tier":null}`, "bot", []string{"read"}, "standard", ""},
		{"admin: admin scope", true, `{"name":"ops","scopes":["admin"]}`, "ops", []string{"admin"}, "standard", ""},
		{"admin: all scopes, premium", true, `{"name":"ops","scopes":["read","trade","admin"],"rate_limit_tier":"premium"}`, "ops", []string{"admin", "read", "trade"}, "premium", ""},
		{"admin: unlimited", true, `{"name":"ops","scopes":["read"],"rate_limit_tier":"unlimited"}`, "ops", []string{"read"}, "unlimited", ""},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := ts.sub(t)
			session := adminSession
			if !tc.admin {
				// A fresh account each, so that the key limit stays out of it.
				session, _ = ts.registerAccount(fmt.Sprintf("keyuser%02d", i))
			}
			active := ts.eng.Stats().ActiveKeys
			m := ts.postKey(session, tc.body)
			checkNewKey(t, ts, m)
			if got := jsonStr(t, m, "name"); got != tc.wantName {
				t.Errorf("name %q, want %q", got, tc.wantName)
			}
			if got := jsonStrings(t, m, "scopes"); !slices.Equal(got, tc.scopes) {
				t.Errorf("scopes %v, want %v", got, tc.scopes)
			}
			if got := jsonStr(t, m, "rate_limit_tier"); got != tc.tier {
				t.Errorf("rate_limit_tier %q, want %q", got, tc.tier)
			}
			if got := jsonStr(t, m, "created_at"); got != apiTime(stepClockStart) {
				t.Errorf("created_at %q, want %q", got, apiTime(stepClockStart))
			}
			switch got := m["expires_at"]; {
			case tc.expiresAt == "" && got != nil:
				t.Errorf("expires_at %v, want null", got)
			case tc.expiresAt != "" && got != tc.expiresAt:
				t.Errorf("expires_at %v, want %s", got, tc.expiresAt)
			}
			if got := ts.eng.Stats().ActiveKeys; got != active+1 {
				t.Errorf("active keys %d -> %d", active, got)
			}
			// The key authenticates at once, with the scopes it was given.
			r := ts.do("GET", "/api/markets/active", auth{key: jsonStr(t, m, "key")}, "")
			ts.expect(r, http.StatusOK, "")
			me := ts.do("GET", "/api/agents/me", auth{key: jsonStr(t, m, "key")}, "")
			if slices.Contains(tc.scopes, "read") {
				ts.expect(me, http.StatusOK, "")
			} else {
				ts.expect(me, http.StatusForbidden, "Insufficient scope")
			}
		})
	}
}

// TestCreateKeyRefused sends every kind of invalid creation: each is
// answered with its status and message and stores nothing.
func TestCreateKeyRefused(t *testing.T) {
	ts := newTestServer(t, Config{})
	user, id := ts.registerAccount("ivan")
	fullKey := ts.newKey(user, "read", "trade")
	tests := []struct {
		name   string
		a      auth
		body   string
		status int
		msg    string // exact message, when docs/API.md gives one
		field  string // else the field the message must name
	}{
		{"API key", auth{key: fullKey}, `{"name":"k","scopes":["read"]}`, http.StatusForbidden, "Session required", ""},
		{"no credentials", auth{}, `{"name":"k","scopes":["read"]}`, http.StatusUnauthorized, "Authentication required", ""},

		{"missing name", auth{session: user}, `{"scopes":["read"]}`, http.StatusBadRequest, "", "name"},
		{"empty name", auth{session: user}, `{"name":"","scopes":["read"]}`, http.StatusBadRequest, "", "name"},
		{"65-rune name", auth{session: user}, `{"name":"` + strings.Repeat("é", 65) + `","scopes":["read"]}`, http.StatusBadRequest, "", "name"},
		{"numeric name", auth{session: user}, `{"name":7,"scopes":["read"]}`, http.StatusBadRequest, "", "name"},
		{"null name", auth{session: user}, `{"name":null,"scopes":["read"]}`, http.StatusBadRequest, "", "name"},

		{"missing scopes", auth{session: user}, `{"name":"k"}`, http.StatusBadRequest, "", "scopes"},
		{"null scopes", auth{session: user}, `{"name":"k","scopes":null}`, http.StatusBadRequest, "", "scopes"},
		{"empty scopes", auth{session: user}, `{"name":"k","scopes":[]}`, http.StatusBadRequest, "", "scopes"},
		{"unknown scope", auth{session: user}, `{"name":"k","scopes":["read","write"]}`, http.StatusBadRequest, "", "scopes"},
		{"scope in upper case", auth{session: user}, `{"name":"k","scopes":["READ"]}`, http.StatusBadRequest, "", "scopes"},
		{"scopes as a string", auth{session: user}, `{"name":"k","scopes":"read"}`, http.StatusBadRequest, "", "scopes"},
		{"numeric scope", auth{session: user}, `{"name":"k","scopes":[1]}`, http.StatusBadRequest, "", "scopes"},

		{"0 days", auth{session: user}, `{"name":"k","scopes":["read"],"expires_in_days":0}`, http.StatusBadRequest, "", "expires_in_days"},
		{"3651 days", auth{session: user}, `{"name":"k","scopes":["read"],"expires_in_days":3651}`, http.StatusBadRequest, "", "expires_in_days"},
		{"negative days", auth{session: user}, `{"name":"k","scopes":["read"],"expires_in_days":-1}`, http.StatusBadRequest, "", "expires_in_days"},
		{"fractional days", auth{session: user}, `{"name":"k","scopes":["read"],"expires_in_days":1.5}`, http.StatusBadRequest, "", "expires_in_days"},
		{"days as a string", auth{session: user}, `{"name":"k","scopes":["read"],"expires_in_days":"5"}`, http.StatusBadRequest, "", "expires_in_days"},
		{"fractional days in exponent form", auth{session: user}, `{"name":"k","scopes":["read"],"expires_in_days":2.5e0}`, http.StatusBadRequest, "", "expires_in_days"},
		{"days beyond int64", auth{session: user}, `{"name":"k","scopes":["read"],"expires_in_days":99999999999999999999}`, http.StatusBadRequest, "", "expires_in_days"},
		{"null days", auth{session: user}, `{"name":"k","scopes":["read"],"expires_in_days":null}`, http.StatusBadRequest, "", "expires_in_days"},

		{"unknown tier", auth{session: user}, `{"name":"k","scopes":["read"],"rate_limit_tier":"gold"}`, http.StatusBadRequest, "", "rate_limit_tier"},
		{"numeric tier", auth{session: user}, `{"name":"k","scopes":["read"],"rate_limit_tier":1}`, http.StatusBadRequest, "", "rate_limit_tier"},
		{"premium by a non-admin", auth{session: user}, `{"name":"k","scopes":["read"],"rate_limit_tier":"premium"}`, http.StatusForbidden, "Admin role required", ""},
		{"unlimited by a non-admin", auth{session: user}, `{"name":"k","scopes":["read"],"rate_limit_tier":"unlimited"}`, http.StatusForbidden, "Admin role required", ""},
		{"admin scope by a non-admin", auth{session: user}, `{"name":"k","scopes":["admin"]}`, http.StatusForbidden, "Admin role required", ""},
		{"admin among scopes by a non-admin", auth{session: user}, `{"name":"k","scopes":["read","trade","admin"]}`, http.StatusForbidden, "Admin role required", ""},

		{"unknown field", auth{session: user}, `{"name":"k","scopes":["read"],"tier":"premium"}`, http.StatusBadRequest, "", "tier"},
		{"duplicate name", auth{session: user}, `{"name":"k","name":"j","scopes":["read"]}`, http.StatusBadRequest, "", "name"},
		{"duplicate scopes", auth{session: user}, `{"name":"k","scopes":["read"],"scopes":["trade"]}`, http.StatusBadRequest, "", "scopes"},
		{"trailing garbage", auth{session: user}, `{"name":"k","scopes":["read"]}x`, http.StatusBadRequest, "", ""},
		{"empty body", auth{session: user}, ``, http.StatusBadRequest, "", ""},
		{"array body", auth{session: user}, `[]`, http.StatusBadRequest, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := ts.sub(t)
			before := ts.accessStateOf(id)
			r := ts.do("POST", "/api/keys", tc.a, tc.body)
			switch {
			case tc.field != "":
				ts.expectNamed(r, tc.status, tc.field)
			case tc.msg != "":
				ts.expect(r, tc.status, tc.msg)
			default:
				if ts.expect(r, tc.status, ""); r.errorMessage(t) == "" {
					t.Error("empty error message")
				}
			}
			ts.expectUnchanged(before, id)
		})
	}
}

// TestKeyLimit checks the bound of 10 active keys: revoked and expired
// keys free their slot, and rotating at the bound replaces a key.
func TestKeyLimit(t *testing.T) {
	ts, clk := newSteppedServer(t, Config{})
	user, id := ts.registerAccount("judy")
	var ids []string
	for i := range core.MaxActiveKeys {
		body := `{"name":"k","scopes":["read"]}`
		if i == 0 {
			body = `{"name":"short-lived","scopes":["read"],"expires_in_days":1}`
		}
		ids = append(ids, jsonStr(t, ts.postKey(user, body), "id"))
	}
	refuse := func() {
		t.Helper()
		before := ts.accessStateOf(id)
		ts.expect(ts.do("POST", "/api/keys", auth{session: user}, `{"name":"k","scopes":["read"]}`),
			http.StatusBadRequest, "Active key limit reached")
		ts.expectUnchanged(before, id)
	}
	refuse()

	// Rotating at the bound revokes one and adds one.
	rotated := ts.do("POST", "/api/keys/"+ids[1]+"/rotate", auth{session: user}, "")
	ts.expect(rotated, http.StatusCreated, "")
	refuse()

	ts.expect(ts.do("DELETE", "/api/keys/"+ids[2], auth{session: user}, ""), http.StatusOK, "")
	ts.postKey(user, `{"name":"k","scopes":["read"]}`)
	refuse()

	clk.Advance(24 * time.Hour)
	ts.postKey(user, `{"name":"k","scopes":["read"]}`)
	refuse()
	list := decodeExact(t, ts.do("GET", "/api/keys", auth{session: user}, "").body)
	active := 0
	for _, k := range jsonAt(t, list, "keys").([]any) {
		if k.(map[string]any)["status"] == "active" {
			active++
		}
	}
	if active != core.MaxActiveKeys || jsonInt(t, list, "count") != core.MaxActiveKeys+3 {
		t.Errorf("%d active of %d keys, want %d of %d", active, jsonInt(t, list, "count"), core.MaxActiveKeys, core.MaxActiveKeys+3)
	}
}

// TestListKeys lists an active, an expired and a revoked key with their usage:
// the statuses of docs/API.md, "GET /api/keys", total_requests counting every
// authenticated request, and never a secret or its hash.
func TestListKeys(t *testing.T) {
	ts, clk := newSteppedServer(t, Config{})
	user, _ := ts.registerAccount("kate")
	other, _ := ts.registerAccount("leo")
	otherKey := ts.newKey(other, "read")

	a := ts.postKey(user, `{"name":"reader","scopes":["read"]}`)
	b := ts.postKey(user, `{"name":"short","scopes":["read","trade"],"expires_in_days":1}`)
	c := ts.postKey(user, `{"name":"gone","scopes":["trade"]}`)
	ts.expect(ts.do("DELETE", "/api/keys/"+jsonStr(t, c, "id"), auth{session: user}, ""), http.StatusOK, "")
	secrets := []string{jsonStr(t, a, "key"), jsonStr(t, b, "key"), jsonStr(t, c, "key")}

	clk.Advance(time.Hour)
	used := clk.Now()
	keyA := auth{key: jsonStr(t, a, "key")}
	ts.expect(ts.do("GET", "/api/agents/me", keyA, ""), http.StatusOK, "")
	ts.expect(ts.do("GET", "/api/markets/active", keyA, ""), http.StatusOK, "")
	// Refused after authentication: still a request made with the key
	// (docs/API.md, "Authentication").
	ts.expect(ts.do("POST", "/api/keys", keyA, `{}`), http.StatusForbidden, "Session required")
	clk.Advance(24 * time.Hour) // b expires

	r := ts.do("GET", "/api/keys", auth{session: user}, "")
	ts.expect(r, http.StatusOK, "")
	list := decodeExact(t, r.body)
	checkShape(t, "list", list, map[string]shape{"count": sInt, "keys": sArray})
	if n := jsonInt(t, list, "count"); n != 3 || len(list["keys"].([]any)) != 3 {
		t.Fatalf("count %d, keys %v; want the account's 3 keys only", n, list["keys"])
	}
	for _, s := range append(secrets, otherKey) {
		h := sha256Of(s)
		if strings.Contains(string(r.body), s) || strings.Contains(string(r.body), hex.EncodeToString(h[:])) {
			t.Errorf("the list shows a key or its hash: %s", r.body)
		}
	}
	tests := []struct {
		name     string
		created  map[string]any
		status   string
		requests int64
		lastUsed any
	}{
		{"active", a, "active", 3, apiTime(used)},
		{"expired", b, "expired", 0, nil},
		{"revoked", c, "revoked", 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := listedKey(t, list, jsonStr(t, tc.created, "id"))
			checkShape(t, "key", k, listedKeyShape)
			for _, f := range []string{"name", "key_prefix", "rate_limit_tier", "created_at", "expires_at"} {
				if k[f] != tc.created[f] {
					t.Errorf("%s %v, created with %v", f, k[f], tc.created[f])
				}
			}
			if got, want := jsonStrings(t, k, "scopes"), jsonStrings(t, tc.created, "scopes"); !slices.Equal(got, want) {
				t.Errorf("scopes %v, created with %v", got, want)
			}
			if got := jsonStr(t, k, "status"); got != tc.status {
				t.Errorf("status %q, want %q", got, tc.status)
			}
			if got := jsonInt(t, k, "total_requests"); got != tc.requests {
				t.Errorf("total_requests %d, want %d", got, tc.requests)
			}
			if k["last_used_at"] != tc.lastUsed {
				t.Errorf("last_used_at %v, want %v", k["last_used_at"], tc.lastUsed)
			}
		})
	}

	// Listed with the key itself, the listing is one more request of it.
	list = decodeExact(t, ts.do("GET", "/api/keys", keyA, "").body)
	k := listedKey(t, list, jsonStr(t, a, "id"))
	if got := jsonInt(t, k, "total_requests"); got != 4 {
		t.Errorf("total_requests %d when listed with the key, want 4", got)
	}
	if got := k["last_used_at"]; got != apiTime(clk.Now()) {
		t.Errorf("last_used_at %v, want %v", got, apiTime(clk.Now()))
	}
}

// TestRevokeKey checks DELETE /api/keys/{id}: the key stops working at
// once; another account's key, an unknown one, a malformed id and an API
// key as the caller are refused and change nothing.
func TestRevokeKey(t *testing.T) {
	ts := newTestServer(t, Config{})
	user, id := ts.registerAccount("mallory")
	other, _ := ts.registerAccount("nina")
	created := ts.postKey(user, `{"name":"bot","scopes":["read","trade"]}`)
	keyID, key := jsonStr(t, created, "id"), jsonStr(t, created, "key")
	otherCreated := ts.postKey(other, `{"name":"theirs","scopes":["read"]}`)
	otherID, otherKey := jsonStr(t, otherCreated, "id"), jsonStr(t, otherCreated, "key")

	refusals := []struct {
		name   string
		a      auth
		path   string
		status int
		msg    string
		field  string
	}{
		{"another account's key", auth{session: user}, "/api/keys/" + otherID, http.StatusNotFound, "Key not found", ""},
		{"unknown id", auth{session: user}, "/api/keys/" + uuid.NewString(), http.StatusNotFound, "Key not found", ""},
		{"malformed id", auth{session: user}, "/api/keys/not-a-uuid", http.StatusBadRequest, "", "id"},
		{"unhyphenated id", auth{session: user}, "/api/keys/" + strings.ReplaceAll(keyID, "-", ""), http.StatusBadRequest, "", "id"},
		{"by the key itself", auth{key: key}, "/api/keys/" + keyID, http.StatusForbidden, "Session required", ""},
		{"no credentials", auth{}, "/api/keys/" + keyID, http.StatusUnauthorized, "Authentication required", ""},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			ts := ts.sub(t)
			before := ts.accessStateOf(id)
			r := ts.do("DELETE", tc.path, tc.a, "")
			if tc.field != "" {
				ts.expectNamed(r, tc.status, tc.field)
			} else {
				ts.expect(r, tc.status, tc.msg)
			}
			ts.expectUnchanged(before, id)
			ts.expect(ts.do("GET", "/api/agents/me", auth{key: key}, ""), http.StatusOK, "")
			ts.expect(ts.do("GET", "/api/agents/me", auth{key: otherKey}, ""), http.StatusOK, "")
		})
	}

	active := ts.eng.Stats().ActiveKeys
	r := ts.do("DELETE", "/api/keys/"+keyID, auth{session: user}, "")
	ts.expect(r, http.StatusOK, "")
	body := decodeExact(t, r.body)
	checkShape(t, "revoke", body, map[string]shape{"id": sUUID, "status": sString})
	if body["id"] != keyID || body["status"] != "revoked" {
		t.Errorf("revoke answered %v, want {id: %s, status: revoked}", body, keyID)
	}
	if got := ts.eng.Stats().ActiveKeys; got != active-1 {
		t.Errorf("active keys %d -> %d", active, got)
	}
	// At once, on every route, public ones included (docs/API.md,
	// "Authentication").
	for _, path := range []string{"/api/agents/me", "/api/markets/active", "/api/keys"} {
		ts.expect(ts.do("GET", path, auth{key: key}, ""), http.StatusUnauthorized, "Authentication required")
	}
	list := decodeExact(t, ts.do("GET", "/api/keys", auth{session: user}, "").body)
	if got := listedKey(t, list, keyID)["status"]; got != "revoked" {
		t.Errorf("listed as %v after revocation", got)
	}
	// Revoking twice: the key exists, so it is not "Key not found": the
	// server answers its state again and changes nothing (docs/API.md,
	// "DELETE /api/keys/{id}").
	before := ts.accessStateOf(id)
	r = ts.do("DELETE", "/api/keys/"+keyID, auth{session: user}, "")
	ts.expect(r, http.StatusOK, "")
	if got := decodeExact(t, r.body); got["status"] != "revoked" {
		t.Errorf("second revoke answered %v", got)
	}
	ts.expectUnchanged(before, id)
}

// TestRotateKey checks POST /api/keys/{id}/rotate: a new key with the old
// one's name, scopes, tier and lifetime, the old key refused at once, and
// the refusals of 3.1 (only an active key of one's own rotates).
func TestRotateKey(t *testing.T) {
	ts, clk := newSteppedServer(t, Config{})
	adminSession, adminID := ts.adminWithID()
	user, _ := ts.registerAccount("oscar")
	userKey := ts.newKey(user, "read")
	userKeyID := mustKeyID(t, ts, userKey)

	old := ts.postKey(adminSession, `{"name":"ops bot","scopes":["read","trade","admin"],"rate_limit_tier":"premium","expires_in_days":7}`)
	oldID, oldKey := jsonStr(t, old, "id"), jsonStr(t, old, "key")
	ts.expect(ts.do("GET", "/api/agents/me", auth{key: oldKey}, ""), http.StatusOK, "")

	clk.Advance(24 * time.Hour)
	active := ts.eng.Stats().ActiveKeys
	r := ts.do("POST", "/api/keys/"+oldID+"/rotate", auth{session: adminSession}, "")
	ts.expect(r, http.StatusCreated, "")
	rotated := decodeExact(t, r.body)
	checkNewKey(t, ts, rotated)
	newID, newKey := jsonStr(t, rotated, "id"), jsonStr(t, rotated, "key")
	if newID == oldID || newKey == oldKey {
		t.Fatalf("rotation kept the id or the key: %v", rotated)
	}
	for _, f := range []string{"name", "rate_limit_tier"} {
		if rotated[f] != old[f] {
			t.Errorf("%s %v after rotation, was %v", f, rotated[f], old[f])
		}
	}
	if got, want := jsonStrings(t, rotated, "scopes"), jsonStrings(t, old, "scopes"); !slices.Equal(got, want) {
		t.Errorf("scopes %v after rotation, were %v", got, want)
	}
	// The same settings: a 7-day key stays a 7-day key from its rotation.
	if got, want := rotated["expires_at"], apiTime(clk.Now().Add(7*24*time.Hour)); got != want {
		t.Errorf("expires_at %v, want %v (7 days from the rotation)", got, want)
	}
	if got := jsonStr(t, rotated, "created_at"); got != apiTime(clk.Now()) {
		t.Errorf("created_at %v, want %v", got, apiTime(clk.Now()))
	}
	if got := ts.eng.Stats().ActiveKeys; got != active {
		t.Errorf("active keys %d -> %d, want one revoked and one created", active, got)
	}
	ts.expect(ts.do("GET", "/api/agents/me", auth{key: oldKey}, ""), http.StatusUnauthorized, "Authentication required")
	me := decodeExact(t, ts.do("GET", "/api/agents/me", auth{key: newKey}, "").body)
	if got := jsonStr(t, me, "api_key.id"); got != newID {
		t.Errorf("the new key authenticates as key %s, want %s", got, newID)
	}
	list := decodeExact(t, ts.do("GET", "/api/keys", auth{session: adminSession}, "").body)
	if s1, s2 := listedKey(t, list, oldID)["status"], listedKey(t, list, newID)["status"]; s1 != "revoked" || s2 != "active" {
		t.Errorf("old key %v, new key %v; want revoked and active", s1, s2)
	}

	short := ts.postKey(adminSession, `{"name":"short","scopes":["read"],"expires_in_days":1}`)
	clk.Advance(24 * time.Hour)
	refusals := []struct {
		name   string
		a      auth
		id     string
		status int
		msg    string
		field  string
	}{
		{"revoked key", auth{session: adminSession}, oldID, http.StatusNotFound, "Key not found", ""},
		{"expired key", auth{session: adminSession}, jsonStr(t, short, "id"), http.StatusNotFound, "Key not found", ""},
		{"another account's key", auth{session: adminSession}, userKeyID, http.StatusNotFound, "Key not found", ""},
		{"unknown id", auth{session: adminSession}, uuid.NewString(), http.StatusNotFound, "Key not found", ""},
		{"malformed id", auth{session: adminSession}, "42", http.StatusBadRequest, "", "id"},
		{"by an API key", auth{key: newKey}, newID, http.StatusForbidden, "Session required", ""},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			ts := ts.sub(t)
			before := ts.accessStateOf(adminID)
			r := ts.do("POST", "/api/keys/"+tc.id+"/rotate", tc.a, "")
			if tc.field != "" {
				ts.expectNamed(r, tc.status, tc.field)
			} else {
				ts.expect(r, tc.status, tc.msg)
			}
			ts.expectUnchanged(before, adminID)
		})
	}
	ts.expect(ts.do("GET", "/api/agents/me", auth{key: userKey}, ""), http.StatusOK, "")
}

// mustKeyID returns the ID of a key given its secret.
func mustKeyID(t *testing.T, ts *testServer, key string) string {
	t.Helper()
	k, ok := ts.eng.KeyByHash(sha256Of(key))
	if !ok {
		t.Fatalf("key %s... not stored", key[:17])
	}
	return k.ID.String()
}

// TestKeyExpiry steps a test clock past a 1-day key's expiry: the key is
// refused with 401 from that instant and listed as expired, without a
// sleep.
func TestKeyExpiry(t *testing.T) {
	ts, clk := newSteppedServer(t, Config{})
	user, _ := ts.registerAccount("peggy")
	created := ts.postKey(user, `{"name":"day","scopes":["read"],"expires_in_days":1}`)
	id, key := jsonStr(t, created, "id"), jsonStr(t, created, "key")
	if got, want := created["expires_at"], apiTime(stepClockStart.Add(24*time.Hour)); got != want {
		t.Fatalf("expires_at %v, want %v", got, want)
	}
	status := func() any {
		return listedKey(t, decodeExact(t, ts.do("GET", "/api/keys", auth{session: user}, "").body), id)["status"]
	}

	clk.Advance(24*time.Hour - time.Nanosecond)
	ts.expect(ts.do("GET", "/api/agents/me", auth{key: key}, ""), http.StatusOK, "")
	if got := status(); got != "active" {
		t.Errorf("status %v a nanosecond before expiry, want active", got)
	}
	active := ts.eng.Stats().ActiveKeys

	clk.Advance(time.Nanosecond)
	for _, path := range []string{"/api/agents/me", "/api/markets/active", "/api/keys"} {
		ts.expect(ts.do("GET", path, auth{key: key}, ""), http.StatusUnauthorized, "Authentication required")
	}
	if got := status(); got != "expired" {
		t.Errorf("status %v at expiry, want expired", got)
	}
	if got := ts.eng.Stats().ActiveKeys; got != active-1 {
		t.Errorf("active keys %d at expiry, want %d", got, active-1)
	}
}

// profileShape is GET /api/agents/me (docs/API.md, "GET /api/agents/me").
var profileShape = map[string]shape{
	"agent": sObject, "auth": sObject, "stats": sObject, "positions": sArray,
	"recent_trades": sArray, "api_key": sObjectOrNull,
}

// TestProfile checks every field of GET /api/agents/me with a key and with a
// session, after a trade so that positions and recent trades are not
// empty.
func TestProfile(t *testing.T) {
	ts, clk := newSteppedServer(t, Config{})
	adminSession, _ := ts.adminWithID()
	r := ts.do("POST", "/api/markets", auth{session: adminSession},
		`{"title":"Rain?","description":"d","category":"weather","closes_at":"2099-01-01T00:00:00Z"}`)
	ts.expect(r, http.StatusCreated, "")
	marketID := jsonStr(t, decodeExact(t, r.body), "id")

	user, userID := ts.registerAccount("quinn")
	created := ts.postKey(user, `{"name":"trader","scopes":["trade","read"],"expires_in_days":30}`)
	key := jsonStr(t, created, "key")
	clk.Advance(time.Minute)
	r = ts.do("POST", "/api/markets/trade", auth{key: key},
		`{"market_id":"`+marketID+`","side":"yes","shares":10,"reasoning":"clouds"}`)
	ts.expect(r, http.StatusOK, "")
	trade := decodeExact(t, r.body)
	cost := jsonAmount(t, trade, "cost")

	r = ts.do("GET", "/api/agents/me", auth{key: key}, "")
	ts.expect(r, http.StatusOK, "")
	me := decodeExact(t, r.body)
	checkShape(t, "profile", me, profileShape)
	checkShape(t, "agent", me["agent"], agentShape)
	checkShape(t, "auth", me["auth"], map[string]shape{"method": sString, "scopes": sStrings})
	checkShape(t, "stats", me["stats"], map[string]shape{"open_positions": sInt, "total_invested": sNumber})
	checkShape(t, "api_key", me["api_key"], map[string]shape{
		"id": sUUID, "name": sString, "prefix": sString, "scopes": sStrings, "rate_limit_tier": sString,
		"total_requests": sInt, "expires_at": sTimeOrNull,
	})
	positions := me["positions"].([]any)
	if len(positions) != 1 {
		t.Fatalf("positions %v, want the one bought", positions)
	}
	checkShape(t, "position", positions[0], map[string]shape{
		"market_id": sUUID, "side": sString, "currency": sString, "shares": sNumber, "cost": sNumber, "avg_price": sNumber,
	})
	trades := me["recent_trades"].([]any)
	if len(trades) != 1 {
		t.Fatalf("recent_trades %v, want the one made", trades)
	}
	checkShape(t, "recent trade", trades[0], map[string]shape{
		"trade_id": sUUID, "market_id": sUUID, "side": sString, "type": sString, "currency": sString,
		"shares": sNumber, "cost": sNumber, "reasoning": sString, "created_at": sTime,
	})

	strs := map[string]string{
		"agent.id": userID.String(), "agent.name": "quinn", "agent.role": "speculator", "agent.trading_mode": "kp",
		"agent.member_since": apiTime(stepClockStart), "auth.method": "api_key",
		"api_key.id": jsonStr(t, created, "id"), "api_key.name": "trader", "api_key.prefix": key[:17],
		"api_key.rate_limit_tier": "standard", "api_key.expires_at": apiTime(stepClockStart.Add(30 * 24 * time.Hour)),
	}
	for path, want := range strs {
		if got := jsonStr(t, me, path); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	for _, path := range []string{"auth.scopes", "api_key.scopes"} {
		if got := jsonStrings(t, me, path); !slices.Equal(got, []string{"read", "trade"}) {
			t.Errorf("%s = %v, want the key's [read trade]", path, got)
		}
	}
	if got := jsonAmount(t, me, "agent.balance"); got != money.Units(1000)-cost {
		t.Errorf("balance %v, want 1000 - %v", got, cost)
	}
	if got := jsonInt(t, me, "stats.open_positions"); got != 1 {
		t.Errorf("open_positions %d, want 1", got)
	}
	if got := jsonAmount(t, me, "stats.total_invested"); got != cost {
		t.Errorf("total_invested %v, want the cost %v", got, cost)
	}
	// The trade and this request.
	if got := jsonInt(t, me, "api_key.total_requests"); got != 2 {
		t.Errorf("total_requests %d, want 2", got)
	}
	pos := positions[0].(map[string]any)
	if pos["market_id"] != marketID || pos["side"] != "yes" || jsonAmount(t, pos, "shares") != money.Units(10) ||
		jsonAmount(t, pos, "cost") != cost {
		t.Errorf("position %v, want 10 yes shares of %s at %v", pos, marketID, cost)
	}
	tr := trades[0].(map[string]any)
	if tr["trade_id"] != trade["trade_id"] || tr["market_id"] != marketID || tr["side"] != "yes" || tr["type"] != "buy" ||
		tr["reasoning"] != "clouds" || tr["created_at"] != apiTime(clk.Now()) {
		t.Errorf("recent trade %v does not match the trade %v", tr, trade)
	}

	// A key without expiry: expires_at is null.
	plain := ts.newKey(user, "read")
	me = decodeExact(t, ts.do("GET", "/api/agents/me", auth{key: plain}, "").body)
	if v, ok := me["api_key"].(map[string]any); !ok || v["expires_at"] != nil {
		t.Errorf("api_key %v, want expires_at null", me["api_key"])
	}

	// With a session: no key, and every scope (docs/API.md, "Authentication").
	me = decodeExact(t, ts.do("GET", "/api/agents/me", auth{session: user}, "").body)
	checkShape(t, "profile", me, profileShape)
	if me["api_key"] != nil {
		t.Errorf("api_key %v with a session, want null", me["api_key"])
	}
	if got := jsonStr(t, me, "auth.method"); got != "session" {
		t.Errorf("auth.method %q, want session", got)
	}
	if got := jsonStrings(t, me, "auth.scopes"); !slices.Equal(got, []string{"admin", "read", "trade"}) {
		t.Errorf("session scopes %v, want all of read, trade, admin", got)
	}
	if got := jsonStr(t, me, "agent.id"); got != userID.String() {
		t.Errorf("agent.id %s, want %s", got, userID)
	}
}

// TestKeyRaces makes creations at the key limit and rotations of one key
// at once: the limit holds (exactly 10 created) and a key rotates once.
func TestKeyRaces(t *testing.T) {
	ts := newTestServer(t, Config{})
	user, id := ts.registerAccount("rupert")
	got := ts.concurrently(2*core.MaxActiveKeys+4, "POST", "/api/keys", auth{session: user}, `{"name":"k","scopes":["read"]}`)
	if want := map[int]int{http.StatusCreated: core.MaxActiveKeys, http.StatusBadRequest: core.MaxActiveKeys + 4}; !maps.Equal(got, want) {
		t.Errorf("concurrent creations answered %v, want %v", got, want)
	}
	if n := len(ts.eng.Keys(id)); n != core.MaxActiveKeys {
		t.Errorf("%d keys stored, want %d", n, core.MaxActiveKeys)
	}

	keyID := ts.eng.Keys(id)[0].ID.String()
	got = ts.concurrently(8, "POST", "/api/keys/"+keyID+"/rotate", auth{session: user}, "")
	if want := map[int]int{http.StatusCreated: 1, http.StatusNotFound: 7}; !maps.Equal(got, want) {
		t.Errorf("concurrent rotations answered %v, want %v", got, want)
	}
	if n := len(ts.eng.Keys(id)); n != core.MaxActiveKeys+1 {
		t.Errorf("%d keys stored after the rotations, want %d", n, core.MaxActiveKeys+1)
	}
}
