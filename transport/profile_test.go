package transport

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"marketd/core"
)

// Tests of GET/PATCH /api/settings and POST /api/profile/* (docs/API.md,
// their sections).

var settingsShape = map[string]shape{"notifications": sBool, "show_on_leaderboard": sBool, "theme": sString}

func TestSettings(t *testing.T) {
	ts, clk := newClockServer(t, Config{}, nil)
	sess, id := ts.registerAccount("setter")
	me := auth{session: sess}
	r := ts.do("GET", "/api/settings", me, "")
	ts.expect(r, http.StatusOK, "")
	checkShape(t, "settings", decodeExact(t, r.body), settingsShape)
	if string(r.body) != `{"notifications":true,"show_on_leaderboard":true,"theme":"system"}` {
		t.Fatalf("default settings %s", r.body)
	}
	steps := []struct {
		body, want string
	}{
		{`{"theme":"dark"}`, `{"notifications":true,"show_on_leaderboard":true,"theme":"dark"}`},
		{`{"notifications":false,"show_on_leaderboard":false}`, `{"notifications":false,"show_on_leaderboard":false,"theme":"dark"}`},
		{`{"notifications":true,"theme":"light"}`, `{"notifications":true,"show_on_leaderboard":false,"theme":"light"}`},
	}
	for _, st := range steps {
		r := ts.do("PATCH", "/api/settings", me, st.body)
		ts.expect(r, http.StatusOK, "")
		if string(r.body) != st.want {
			t.Fatalf("PATCH %s = %s, want %s", st.body, r.body, st.want)
		}
		if got := ts.do("GET", "/api/settings", me, ""); string(got.body) != st.want {
			t.Fatalf("GET after PATCH %s = %s", st.body, got.body)
		}
	}
	before := ts.accessStateOf(id)
	bad := []struct {
		name, body, field string
	}{
		{"empty object", `{}`, "settings"},
		{"unknown key", `{"colour":"red"}`, "colour"},
		{"unknown key beside a known one", `{"theme":"dark","sound":true}`, "sound"},
		{"wrong type", `{"notifications":"no"}`, "notifications"},
		{"wrong type of theme", `{"theme":1}`, "theme"},
		{"unknown theme", `{"theme":"blue"}`, "theme"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			ts := ts.sub(t)
			ts.expectNamed(ts.do("PATCH", "/api/settings", me, tc.body), http.StatusBadRequest, tc.field)
		})
	}
	ts.expectUnchanged(before, id)

	// A read key reads the settings and cannot change them.
	read := auth{key: ts.newKey(sess, "read")}
	ts.expect(ts.do("GET", "/api/settings", read, ""), http.StatusOK, "")
	ts.expect(ts.do("PATCH", "/api/settings", read, `{"theme":"dark"}`), http.StatusForbidden, "Insufficient scope")

	// show_on_leaderboard false keeps a trader off the leaderboard.
	adm := ts.admin()
	mkt := ts.createMarket(adm, nil)
	ts.trade(me, mkt.ID.String(), "yes", "buy", "1")
	clk.Advance(core.LeaderboardMaxAge)
	if r := ts.do("GET", "/api/leaderboard", auth{}, ""); !strings.Contains(string(r.body), `"count":0`) {
		t.Fatalf("hidden trader on the leaderboard: %s", r.body)
	}
	ts.expect(ts.do("PATCH", "/api/settings", me, `{"show_on_leaderboard":true}`), http.StatusOK, "")
	clk.Advance(core.LeaderboardMaxAge)
	if r := ts.do("GET", "/api/leaderboard", auth{}, ""); !strings.Contains(string(r.body), `"name":"setter"`) {
		t.Fatalf("shown trader not on the leaderboard: %s", r.body)
	}
}

func TestProfileOperations(t *testing.T) {
	ts, clk := newClockServer(t, Config{}, nil)
	sess, id := ts.registerAccount("profiler")
	me := auth{session: sess}
	persona := strings.Repeat("日", core.MaxPersonaRunes)
	r := ts.do("POST", "/api/profile/persona", me, jsonBody(map[string]any{"persona": persona}))
	ts.expect(r, http.StatusOK, "")
	if m := decodeExact(t, r.body); len(m) != 1 || m["persona"] != persona {
		t.Fatalf("persona answer %s", r.body)
	}
	clk.Advance(time.Minute)
	r = ts.do("POST", "/api/profile/accept-tos", me, `{"version":"v2.1"}`)
	ts.expect(r, http.StatusOK, "")
	m := decodeExact(t, r.body)
	checkShape(t, "accept-tos", m, map[string]shape{"tos_version": sString, "tos_accepted_at": sTime})
	if m["tos_version"] != "v2.1" || m["tos_accepted_at"] != apiTime(clk.Now()) {
		t.Fatalf("accept-tos answer %s, want v2.1 at %s", r.body, apiTime(clk.Now()))
	}
	r = ts.do("POST", "/api/profile/trading-mode", me, `{"mode":"kp"}`)
	ts.expect(r, http.StatusOK, "")
	if string(r.body) != `{"trading_mode":"kp"}` {
		t.Fatalf("trading-mode answer %s", r.body)
	}
	prof := decodeExact(t, ts.do("GET", "/api/agents/me", me, "").body)
	if jsonStr(t, prof, "agent.persona") != persona || jsonStr(t, prof, "agent.tos_version") != "v2.1" ||
		jsonStr(t, prof, "agent.tos_accepted_at") != apiTime(clk.Now()) || jsonAt(t, prof, "agent.wallet_address") != nil {
		t.Fatalf("profile %v", prof["agent"])
	}

	before := ts.accessStateOf(id)
	bad := []struct {
		name, path, body, field, msg string
	}{
		{"persona too long", "/api/profile/persona", jsonBody(map[string]any{"persona": persona + "x"}), "persona", ""},
		{"persona missing", "/api/profile/persona", `{}`, "persona", ""},
		{"persona not a string", "/api/profile/persona", `{"persona":5}`, "persona", ""},
		{"persona and more", "/api/profile/persona", `{"persona":"a","mood":"b"}`, "mood", ""},
		{"tos version missing", "/api/profile/accept-tos", `{}`, "version", ""},
		{"tos version empty", "/api/profile/accept-tos", `{"version":""}`, "version", ""},
		{"tos version too long", "/api/profile/accept-tos", jsonBody(map[string]any{"version": strings.Repeat("v", 33)}), "version", ""},
		{"mode missing", "/api/profile/trading-mode", `{}`, "mode", ""},
		{"mode unknown", "/api/profile/trading-mode", `{"mode":"eur"}`, "mode", ""},
		{"mode upper case", "/api/profile/trading-mode", `{"mode":"USDC"}`, "mode", ""},
		{"usdc without wallet", "/api/profile/trading-mode", `{"mode":"usdc"}`, "", "Link a wallet first"},
		{"not JSON", "/api/profile/persona", `persona`, "", ""},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			ts := ts.sub(t)
			r := ts.do("POST", tc.path, me, tc.body)
			if tc.field != "" {
				ts.expectNamed(r, http.StatusBadRequest, tc.field)
				return
			}
			ts.expect(r, http.StatusBadRequest, tc.msg)
		})
	}
	ts.expectUnchanged(before, id)
}
