package transport

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/core/pricing"
	"marketd/transport/wire"
)

// TestCreateMarket creates markets with every field given and with the
// optional ones left out, and checks the 201 answer field by field against
// docs/API.md, "The market object".
func TestCreateMarket(t *testing.T) {
	ts, clk := newClockServer(t, Config{}, nil)
	adm := ts.admin()
	adminKey := ts.newKey(adm, "admin")
	closes := clk.Now().Add(48 * time.Hour)

	tests := []struct {
		name      string
		a         auth
		body      map[string]any
		alpha     float64
		liquidity money.Amount
	}{
		{"every field, session", auth{session: adm},
			map[string]any{"title": "Will BTC close above 100k?", "description": "Coinbase close.", "category": "crypto",
				"closes_at": iso(closes), "alpha": 0.1, "liquidity": 250.5},
			0.1, money.Amount(250_500_000)},
		{"defaults, admin key", auth{key: adminKey},
			map[string]any{"title": "Rain", "description": "", "category": "weather", "closes_at": iso(closes)},
			core.DefaultAlpha, money.Units(1000)},
		{"no description, offset closing time", auth{session: adm},
			map[string]any{"title": "Snow", "category": "weather",
				"closes_at": closes.In(time.FixedZone("", 2*3600)).Format(time.RFC3339)},
			core.DefaultAlpha, money.Units(1000)},
		{"range ends", auth{session: adm},
			map[string]any{"title": strings.Repeat("é", core.MaxTitleRunes), "description": strings.Repeat("ü", core.MaxDescriptionRunes),
				"category": strings.Repeat("ß", core.MaxCategoryRunes), "closes_at": iso(closes), "alpha": 1, "liquidity": 1e9},
			1, money.Units(1_000_000_000)},
		{"smallest alpha and liquidity", auth{session: adm},
			map[string]any{"title": "t", "category": "c", "closes_at": iso(closes), "alpha": 0.002, "liquidity": 0.000001},
			0.002, money.Amount(1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := ts.sub(t)
			r := ts.do("POST", "/api/markets", tt.a, jsonBody(tt.body))
			ts.expect(r, http.StatusCreated, "")
			raw := r.json(t)
			checkMarketObject(t, raw)
			for _, f := range []string{"outcome", "resolved_at"} {
				if raw[f] != nil {
					t.Errorf("%s = %v, want null before settlement", f, raw[f])
				}
			}
			var m wire.Market
			ts.decode(r, http.StatusCreated, &m)
			desc, _ := tt.body["description"].(string)
			if m.Title != tt.body["title"] || m.Description != desc || m.Category != tt.body["category"] {
				t.Errorf("title, description, category = %q, %q, %q; body %v", m.Title, m.Description, m.Category, tt.body)
			}
			if m.ClosesAt != wire.Timestamp(closes.UnixNano()) || m.CreatedAt != wire.Timestamp(clk.Now().UnixNano()) {
				t.Errorf("closes_at %s, created_at %s; want %s, %s", m.ClosesAt, m.CreatedAt, iso(closes), iso(clk.Now()))
			}
			if m.Status != "active" || m.Volume != 0 {
				t.Errorf("status %q, volume %v; want active, 0", m.Status, m.Volume)
			}
			want := wire.Liquidity{Alpha: tt.alpha, QYes: tt.liquidity, QNo: tt.liquidity}
			if m.Liquidity != want {
				t.Errorf("liquidity %+v, want %+v", m.Liquidity, want)
			}
			yes, no := pricing.Prices(tt.alpha, [2]money.Amount{tt.liquidity, tt.liquidity})
			if m.Prices != (wire.SidePair{Yes: yes, No: no}) || m.Multipliers != (wire.SidePair{Yes: 1 / yes, No: 1 / no}) {
				t.Errorf("prices %+v, multipliers %+v; want %v %v and their inverses", m.Prices, m.Multipliers, yes, no)
			}
			// The market reads back as it was created.
			got := ts.do("GET", "/api/markets/"+m.ID.String(), auth{}, "")
			ts.expect(got, http.StatusOK, "")
			if !bytes.Equal(got.body, r.body) {
				t.Errorf("GET /api/markets/%s = %s, created %s", m.ID, got.body, r.body)
			}
		})
	}
}

// TestCreateMarketRefused sends every kind of invalid market and every
// caller that may not create one: each answers its error and creates
// nothing.
func TestCreateMarketRefused(t *testing.T) {
	ts, clk := newClockServer(t, Config{}, nil)
	adm := ts.admin()
	user := ts.register("speculator")
	readTradeKey := ts.newKey(adm, "read", "trade")
	now := clk.Now()
	valid := func(field string, v any) string {
		body := map[string]any{"title": "t", "description": "d", "category": "c", "closes_at": iso(now.Add(time.Hour))}
		if v == nil {
			delete(body, field)
		} else {
			body[field] = v
		}
		return jsonBody(body)
	}
	raw := func(field, literal string) string {
		return fmt.Sprintf(`{"title":"t","category":"c","closes_at":%q,%q:%s}`, iso(now.Add(time.Hour)), field, literal)
	}
	tests := []struct {
		name   string
		a      auth
		body   string
		status int
		msg    string // exact message, or
		field  string // the field the message must name
	}{
		{"title missing", auth{session: adm}, valid("title", nil), 400, "", "title"},
		{"title empty", auth{session: adm}, valid("title", ""), 400, "", "title"},
		{"title 201 runes", auth{session: adm}, valid("title", strings.Repeat("é", 201)), 400, "", "title"},
		{"title not a string", auth{session: adm}, valid("title", 5), 400, "", "title"},
		{"description 5001 runes", auth{session: adm}, valid("description", strings.Repeat("ü", 5001)), 400, "", "description"},
		{"category missing", auth{session: adm}, valid("category", nil), 400, "", "category"},
		{"category empty", auth{session: adm}, valid("category", ""), 400, "", "category"},
		{"category 65 runes", auth{session: adm}, valid("category", strings.Repeat("ß", 65)), 400, "", "category"},
		{"closes_at missing", auth{session: adm}, valid("closes_at", nil), 400, "", "closes_at"},
		{"closes_at not a time", auth{session: adm}, valid("closes_at", "tomorrow"), 400, "", "closes_at"},
		{"closes_at a number", auth{session: adm}, valid("closes_at", 1900000000), 400, "", "closes_at"},
		{"closes_at in the past", auth{session: adm}, valid("closes_at", iso(now.Add(-time.Second))), 400, "", "closes_at"},
		{"closes_at now, in another zone", auth{session: adm},
			valid("closes_at", now.In(time.FixedZone("", 3600)).Format(time.RFC3339)), 400, "", "closes_at"},
		{"alpha below range", auth{session: adm}, raw("alpha", "0.0019"), 400, "", "alpha"},
		{"alpha above range", auth{session: adm}, raw("alpha", "1.0001"), 400, "", "alpha"},
		{"alpha zero", auth{session: adm}, raw("alpha", "0"), 400, "", "alpha"},
		{"alpha negative", auth{session: adm}, raw("alpha", "-0.1"), 400, "", "alpha"},
		{"alpha as a string", auth{session: adm}, raw("alpha", `"0.1"`), 400, "", "alpha"},
		{"alpha overflowing", auth{session: adm}, raw("alpha", "1e400"), 400, "", "alpha"},
		{"liquidity zero", auth{session: adm}, raw("liquidity", "0"), 400, "", "liquidity"},
		{"liquidity negative", auth{session: adm}, raw("liquidity", "-5"), 400, "", "liquidity"},
		{"liquidity over 1e9", auth{session: adm}, raw("liquidity", "1000000000.000001"), 400, "", "liquidity"},
		{"liquidity 7 decimals", auth{session: adm}, raw("liquidity", "1.0000001"), 400, "", "liquidity"},
		{"liquidity as a string", auth{session: adm}, raw("liquidity", `"10"`), 400, "", "liquidity"},
		{"unknown field", auth{session: adm}, raw("colour", `"red"`), 400, "", "colour"},
		{"no credentials", auth{}, valid("title", "t"), 401, "Authentication required", ""},
		{"speculator session", auth{session: user}, valid("title", "t"), 403, "Admin role required", ""},
		{"admin key without admin scope", auth{key: readTradeKey}, valid("title", "t"), 403, "Insufficient scope", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := ts.sub(t)
			before := ts.do("GET", "/api/markets?status=all", auth{}, "")
			r := ts.do("POST", "/api/markets", tt.a, tt.body)
			ts.expectError(r, tt.status, tt.msg, tt.field)
			if after := ts.do("GET", "/api/markets?status=all", auth{}, ""); !bytes.Equal(before.body, after.body) {
				t.Errorf("markets changed: before %s, after %s", before.body, after.body)
			}
		})
	}
}

// TestGetMarket covers the one-market endpoint's errors.
func TestGetMarket(t *testing.T) {
	ts := newTestServer(t, Config{})
	adm := ts.admin()
	m := ts.createMarket(adm, nil)
	tests := []struct {
		name   string
		path   string
		status int
		msg    string
		field  string
	}{
		{"unknown market", "/api/markets/" + uuid.NewString(), 404, "Market not found", ""},
		{"malformed id", "/api/markets/not-a-uuid", 400, "", "id"},
		{"id with trailing data", "/api/markets/" + m.ID.String() + "x", 400, "", "id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := ts.sub(t)
			ts.expectError(ts.do("GET", tt.path, auth{}, ""), tt.status, tt.msg, tt.field)
		})
	}
	if got := ts.market(m.ID.String()); got.ID != m.ID || got.Status != "active" {
		t.Errorf("GET /api/markets/%s = %+v", m.ID, got)
	}
}

func marketIDs(l wire.MarketList) []string {
	ids := make([]string, 0, len(l.Markets))
	for _, m := range l.Markets {
		ids = append(ids, m.ID.String())
	}
	return ids
}

// TestListMarkets filters, searches, sorts and pages five markets in
// every status, on GET /api/markets and GET /api/markets/active.
func TestListMarkets(t *testing.T) {
	ts, clk := newClockServer(t, Config{}, nil)
	adm := ts.admin()
	user := ts.register("trader")
	start := clk.Now()
	create := func(title, desc, category string, closesIn time.Duration) string {
		// A second between creations keeps created_at distinct, so that
		// newest has one right answer.
		clk.Advance(time.Second)
		return ts.createMarket(adm, map[string]any{"title": title, "description": desc, "category": category,
			"closes_at": iso(start.Add(closesIn))}).ID.String()
	}
	a := create("Bitcoin above 100k?", "Resolves on the Coinbase close.", "crypto", 30*time.Hour)
	b := create("Rain in Paris", "Météo-France data.", "weather", 10*time.Hour)
	c := create("Ether flips", "Measured against BITCOIN market cap.", "crypto", 20*time.Hour)
	d := create("Snow in Oslo", "", "weather", time.Hour)
	e := create("Election", "ÉLECTION présidentielle", "politics", 40*time.Hour)
	// Buying yes in a makes no cheap there: a has the highest multiplier.
	ts.trade(auth{session: user}, a, "yes", "buy", "100")
	clk.Advance(2 * time.Hour) // d is past its closing time now
	var settled settleOut
	ts.decode(ts.do("POST", "/api/admin/settle", auth{session: adm}, jsonBody(map[string]any{"market_id": e, "outcome": "yes"})),
		http.StatusOK, &settled)

	tests := []struct {
		query string
		want  []string
		count int // when the page is shorter than what matched
	}{
		{"", []string{c, b, a}, 0},
		{"?status=active", []string{c, b, a}, 0},
		{"?status=closed", []string{d}, 0},
		{"?status=resolved", []string{e}, 0},
		{"?status=all", []string{e, d, c, b, a}, 0},
		{"?category=crypto", []string{c, a}, 0},
		{"?category=weather&status=all", []string{d, b}, 0},
		{"?category=weather", []string{b}, 0},
		{"?category=none", []string{}, 0},
		{"?category=crypt", []string{}, 0}, // the whole category, not a part
		{"?search=bitcoin", []string{c, a}, 0},
		{"?search=BiTcOiN", []string{c, a}, 0},
		{"?search=coinbase", []string{a}, 0},
		{"?search=M%C3%89T%C3%89O", []string{b}, 0},
		{"?search=%C3%A9lection&status=all", []string{e}, 0},
		{"?search=in&category=weather&status=all", []string{d, b}, 0},
		{"?search=nothing-like-this", []string{}, 0},
		{"?sort=newest", []string{c, b, a}, 0},
		{"?sort=closing_soon", []string{b, c, a}, 0},
		{"?sort=closing_soon&status=all", []string{d, b, c, a, e}, 0},
		{"?sort=multiplier", []string{a, c, b}, 0},
		{"?status=all&limit=2", []string{e, d}, 5},
		{"?status=all&limit=2&offset=2", []string{c, b}, 5},
		{"?status=all&offset=4", []string{a}, 5},
		{"?status=all&offset=5", []string{}, 5},
		{"?status=all&offset=1000", []string{}, 5},
		{"?status=all&limit=500", []string{e, d, c, b, a}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			ts := ts.sub(t)
			r := ts.do("GET", "/api/markets"+tt.query, auth{}, "")
			ts.expect(r, http.StatusOK, "")
			raw := r.json(t)
			checkFields(t, "list", raw, map[string]fieldKind{"count": kindInteger, "markets": kindArray})
			for _, m := range raw["markets"].([]any) {
				checkMarketObject(t, m.(map[string]any))
			}
			var l wire.MarketList
			ts.decode(r, http.StatusOK, &l)
			count := tt.count
			if count == 0 {
				count = len(tt.want)
			}
			if got := marketIDs(l); !slices.Equal(got, tt.want) || l.Count != count {
				t.Errorf("count %d, markets %v; want %d, %v (a..e = %v)", l.Count, got, count, tt.want, []string{a, b, c, d, e})
			}
		})
	}

	t.Run("statuses and outcomes", func(t *testing.T) {
		ts := ts.sub(t)
		for id, want := range map[string]string{a: "active", d: "closed", e: "resolved"} {
			m := ts.market(id)
			resolved := m.Outcome != nil && *m.Outcome == "yes" && m.ResolvedAt != nil && *m.ResolvedAt == wire.Timestamp(clk.Now().UnixNano())
			if m.Status != want || resolved != (want == "resolved") {
				t.Errorf("market %s: status %q, outcome %v, resolved_at %v; want %s", id, m.Status, m.Outcome, m.ResolvedAt, want)
			}
		}
		if m := ts.market(a); m.Volume <= 0 || m.Liquidity.QYes != money.Units(1100) {
			t.Errorf("market a after a buy of 100 yes: volume %v, q_yes %v", m.Volume, m.Liquidity.QYes)
		}
	})

	t.Run("active endpoint", func(t *testing.T) {
		ts := ts.sub(t)
		r := ts.do("GET", "/api/markets/active", auth{}, "")
		var active wire.MarketList
		ts.decode(r, http.StatusOK, &active)
		if active.Count != 3 || !slices.Equal(marketIDs(active), []string{c, b, a}) {
			t.Errorf("active: count %d, %v; want 3, %v", active.Count, marketIDs(active), []string{c, b, a})
		}
		if listed := ts.do("GET", "/api/markets?status=active", auth{}, ""); !bytes.Equal(r.body, listed.body) {
			t.Errorf("GET /api/markets/active = %s, GET /api/markets?status=active = %s", r.body, listed.body)
		}
	})

	for _, tt := range []struct{ query, field string }{
		{"?status=open", "status"},
		{"?status=", "status"},
		{"?status=ACTIVE", "status"},
		{"?sort=oldest", "sort"},
		{"?sort=", "sort"},
		{"?limit=0", "limit"},
		{"?limit=501", "limit"},
		{"?limit=-1", "limit"},
		{"?limit=ten", "limit"},
		{"?offset=-1", "offset"},
		{"?offset=1.5", "offset"},
	} {
		t.Run("invalid "+tt.query, func(t *testing.T) {
			ts := ts.sub(t)
			ts.expectField(ts.do("GET", "/api/markets"+tt.query, auth{}, ""), tt.field)
		})
	}
}

// TestListMarketsPaging checks the default and largest page sizes and the
// order of ties: every market here closes at the same time and has the
// same multipliers, so closing_soon and multiplier fall back on creation
// order, the later-created first.
func TestListMarketsPaging(t *testing.T) {
	ts, clk := newClockServer(t, Config{}, nil)
	adm := ts.admin()
	closes := iso(clk.Now().Add(time.Hour + 24*time.Hour))
	const n = defaultMarketLimit + 1
	var newestFirst []string
	for i := range n {
		clk.Advance(time.Millisecond)
		m := ts.createMarket(adm, map[string]any{"title": fmt.Sprintf("market %d", i), "closes_at": closes})
		newestFirst = append([]string{m.ID.String()}, newestFirst...)
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"", newestFirst[:defaultMarketLimit]},
		{"?offset=50", newestFirst[50:]},
		{"?limit=500", newestFirst},
		{"?limit=1", newestFirst[:1]},
		{"?sort=closing_soon&limit=500", newestFirst},
		{"?sort=multiplier&limit=500", newestFirst},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			ts := ts.sub(t)
			var l wire.MarketList
			ts.decode(ts.do("GET", "/api/markets"+tt.query, auth{}, ""), http.StatusOK, &l)
			if got := marketIDs(l); l.Count != n || !slices.Equal(got, tt.want) {
				t.Errorf("count %d, %d markets %v; want %d, %v", l.Count, len(got), got, n, tt.want)
			}
		})
	}
	var active wire.MarketList
	ts.decode(ts.do("GET", "/api/markets/active", auth{}, ""), http.StatusOK, &active)
	if active.Count != n || !slices.Equal(marketIDs(active), newestFirst) {
		t.Errorf("GET /api/markets/active: count %d, %d markets; want all %d, newest first", active.Count, len(active.Markets), n)
	}
}

// TestCreateMarketClosesAtMessage: a closes_at that is not an RFC 3339
// time is refused with the message docs/API.md's clients match on, word
// for word, whatever the Go names of the answer types.
func TestCreateMarketClosesAtMessage(t *testing.T) {
	ts := newTestServer(t, Config{})
	adm := ts.admin()
	const want = "closes_at: must be an ISO 8601 timestamp such as 2030-01-01T00:00:00Z"
	for _, tc := range []struct{ name, closesAt string }{
		{"a word", "tomorrow"},
		{"a date without a time", "2030-01-01"},
		{"no zone", "2030-01-01T00:00:00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := ts.sub(t)
			body := jsonBody(map[string]any{"title": "t", "description": "d", "category": "c", "closes_at": tc.closesAt})
			ts.expect(ts.do("POST", "/api/markets", auth{session: adm}, body), 400, want)
		})
	}
}
