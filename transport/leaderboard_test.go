package transport

import (
	"cmp"
	"net/http"
	"slices"
	"testing"
	"time"

	"marketd/core"
	"marketd/core/money"
)

type leaderOut struct {
	Rank    int          `json:"rank"`
	AgentID string       `json:"agent_id"`
	Name    string       `json:"name"`
	Profit  money.Amount `json:"profit"`
	Volume  money.Amount `json:"volume"`
}

type leaderboardOut struct {
	Count   int         `json:"count"`
	Leaders []leaderOut `json:"leaders"`
}

func (ts *testServer) leaderboard(a auth, query string) leaderboardOut {
	ts.t.Helper()
	r := ts.do("GET", "/api/leaderboard"+query, a, "")
	ts.expect(r, http.StatusOK, "")
	m := decodeExact(ts.t, r.body)
	checkShape(ts.t, "leaderboard", m, map[string]shape{"count": sInt, "leaders": sArray})
	for _, l := range m["leaders"].([]any) {
		checkShape(ts.t, "leader", l, map[string]shape{"rank": sInt, "agent_id": sUUID, "name": sString,
			"profit": sNumber, "volume": sNumber})
	}
	var out leaderboardOut
	ts.decode(r, http.StatusOK, &out)
	return out
}

// trader follows one account's KP through the test's trades: profit is
// what it received selling minus what it paid buying, plus the cost basis
// it still holds (zero here: every trader below either only buys or sells
// all it bought, and a buy-only trader's basis equals what it paid).
type trader struct {
	name    string
	session string
	paid    money.Amount
	got     money.Amount
	held    money.Amount // cost basis still held
}

func (tr *trader) leader() leaderOut {
	return leaderOut{Name: tr.name, Profit: tr.got - tr.paid + tr.held, Volume: tr.paid + tr.got}
}

// TestLeaderboard ranks traders by profit, then volume, then name; leaves
// out accounts that never traded (the admin who created the markets, an
// idle one); applies limit; is public, and rate-limited as such; and
// serves a ranking at most a second old by the server's clock.
func TestLeaderboard(t *testing.T) {
	ts, clk := newClockServer(t, Config{}, nil)
	admin := ts.admin()
	title := func(s string) map[string]any { return map[string]any{"title": s} }
	a := ts.createMarket(admin, title("A")).ID.String()
	twins := []string{ts.createMarket(admin, title("B")).ID.String(), ts.createMarket(admin, title("C")).ID.String()}
	d := ts.createMarket(admin, title("D")).ID.String()

	traders := map[string]*trader{}
	for _, n := range []string{"alice", "bob", "carol", "erin", "dave", "frank", "idle"} {
		traders[n] = &trader{name: n, session: ts.register(n)}
	}
	buy := func(n, market, side, shares string) {
		tr := traders[n]
		out := ts.trade(auth{session: tr.session}, market, side, "buy", shares)
		tr.paid += out.Cost
	}
	sell := func(n, market, side, shares string) {
		tr := traders[n]
		out := ts.trade(auth{session: tr.session}, market, side, "sell", shares)
		tr.got += out.Cost
	}
	// Alice buys before bob and sells into his demand; carol buys on top
	// and sells after bob: a gain, and losses.
	buy("alice", a, "yes", "10")
	buy("bob", a, "yes", "100")
	sell("alice", a, "yes", "10")
	buy("carol", a, "yes", "30")
	sell("bob", a, "yes", "100")
	sell("carol", a, "yes", "30")
	// Buying only earns nothing yet: dave and erin tie on profit and
	// volume too (the same buy in two fresh, equal markets), frank ties on
	// profit with more volume.
	buy("erin", twins[0], "no", "10")
	buy("dave", twins[1], "no", "10")
	buy("frank", d, "no", "20")
	for _, n := range []string{"erin", "dave", "frank"} {
		traders[n].held = traders[n].paid
	}

	var want []leaderOut
	for n, tr := range traders {
		if n != "idle" {
			want = append(want, tr.leader())
		}
	}
	slices.SortFunc(want, func(x, y leaderOut) int {
		if c := cmp.Compare(y.Profit, x.Profit); c != 0 {
			return c
		}
		if c := cmp.Compare(y.Volume, x.Volume); c != 0 {
			return c
		}
		return cmp.Compare(x.Name, y.Name)
	})
	if dave, erin := traders["dave"].leader(), traders["erin"].leader(); dave.Profit != erin.Profit || dave.Volume != erin.Volume {
		t.Fatalf("dave %+v and erin %+v do not tie: the name order goes untested", dave, erin)
	}
	if frank := traders["frank"].leader(); frank.Profit != 0 || frank.Volume <= traders["dave"].leader().Volume {
		t.Fatalf("frank %+v does not tie with dave on profit with more volume", frank)
	}
	if traders["alice"].leader().Profit <= 0 || traders["carol"].leader().Profit >= 0 {
		t.Fatalf("alice %+v should gain, carol %+v lose", traders["alice"].leader(), traders["carol"].leader())
	}
	for i := range want {
		want[i].Rank = i + 1
		v, ok := ts.eng.AccountByName(want[i].Name)
		if !ok {
			t.Fatalf("no account %s", want[i].Name)
		}
		want[i].AgentID = v.ID.String()
	}

	got := ts.leaderboard(auth{}, "")
	if got.Count != len(want) || !slices.Equal(got.Leaders, want) {
		t.Fatalf("leaderboard %+v\nwant count %d, %+v", got, len(want), want)
	}

	t.Run("limit", func(t *testing.T) {
		ts := ts.sub(t)
		for _, tc := range []struct {
			query string
			n     int
		}{{"?limit=1", 1}, {"?limit=3", 3}, {"?limit=500", len(want)}} {
			got := ts.leaderboard(auth{}, tc.query)
			if got.Count != len(want) || !slices.Equal(got.Leaders, want[:tc.n]) {
				t.Fatalf("%s: %+v, want count %d, %+v", tc.query, got, len(want), want[:tc.n])
			}
		}
	})

	t.Run("bad limit", func(t *testing.T) {
		for _, q := range []string{"?limit=0", "?limit=501", "?limit=-1", "?limit=ten", "?limit=", "?limit=1.5"} {
			t.Run(q, func(t *testing.T) {
				ts := ts.sub(t)
				ts.expect(ts.do("GET", "/api/leaderboard"+q, auth{}, ""), http.StatusBadRequest,
					"limit: must be an integer from 1 to 500")
			})
		}
	})

	t.Run("access", func(t *testing.T) {
		ts := ts.sub(t)
		alice := traders["alice"].session
		for _, a := range []auth{{}, {session: alice}, {key: ts.newKey(alice, "read")}, {key: ts.newKey(alice, "trade")}} {
			if got := ts.leaderboard(a, ""); !slices.Equal(got.Leaders, want) {
				t.Fatalf("as %+v: %+v", a, got)
			}
		}
		// Credentials that are sent are still checked.
		ts.expect(ts.do("GET", "/api/leaderboard", auth{key: "svc_live_" + "00000000000000000000000000000000"}, ""),
			http.StatusUnauthorized, "Authentication required")
		// Anonymous requests count against the address's limit.
		first := rateLimitOf(t, ts.do("GET", "/api/leaderboard", auth{}, ""))
		second := rateLimitOf(t, ts.do("GET", "/api/leaderboard", auth{}, ""))
		if !first.present || first.limit != DefaultAnonRatePerMinute || second.remaining != first.remaining-1 {
			t.Fatalf("anonymous rate-limit headers %+v then %+v, want limit %d counting down",
				first, second, DefaultAnonRatePerMinute)
		}
	})

	t.Run("cache period", func(t *testing.T) {
		ts := ts.sub(t)
		gina := &trader{name: "gina", session: ts.register("gina")}
		traders["gina"] = gina
		out := ts.trade(auth{session: gina.session}, d, "yes", "buy", "1")
		if got := ts.leaderboard(auth{}, "?limit=500"); got.Count != len(want) {
			t.Fatalf("within the cache period: count %d, want the cached %d", got.Count, len(want))
		}
		clk.Advance(core.LeaderboardMaxAge - time.Nanosecond)
		if got := ts.leaderboard(auth{}, "?limit=500"); got.Count != len(want) {
			t.Fatalf("just before the cache period ends: count %d, want the cached %d", got.Count, len(want))
		}
		clk.Advance(time.Nanosecond)
		got := ts.leaderboard(auth{}, "?limit=500")
		i := slices.IndexFunc(got.Leaders, func(l leaderOut) bool { return l.Name == "gina" })
		if got.Count != len(want)+1 || i < 0 || got.Leaders[i].Volume != out.Cost || got.Leaders[i].Profit != 0 {
			t.Fatalf("a second later: %+v, want gina with volume %s and profit 0 among %d", got, out.Cost, len(want)+1)
		}
	})
}
