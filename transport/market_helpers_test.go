package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/internal/manualclock"
	"marketd/transport/wire"
)

// testEpoch is where test clocks start: a fixed time, so that timestamps
// in failures read the same on every run.
var testEpoch = time.Date(2031, 3, 1, 12, 0, 0, 0, time.UTC)

// newClockServer is newTestServer with a clock that the test advances,
// shared by engine and server. before, when not nil, runs on the Server
// before it accepts connections: tests use it to add routes of their own
// to the router without a production hook and without racing the server.
func newClockServer(t *testing.T, cfg Config, before func(*Server)) (*testServer, *manualclock.Clock) {
	t.Helper()
	clk := manualclock.New(testEpoch)
	return startTestServer(t, cfg, clk, before), clk
}

// jsonBody encodes v for a request body; test values always encode.
func jsonBody(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("BUG: test body %v: %v", v, err))
	}
	return string(b)
}

// decode decodes r's body into v, failing the test unless r has status.
func (ts *testServer) decode(r response, status int, v any) {
	ts.t.Helper()
	ts.expect(r, status, "")
	if err := json.Unmarshal(r.body, v); err != nil {
		ts.t.Fatalf("body %s: %v", r.body, err)
	}
}

// expectField fails the test unless r is a 400 whose message names field
// ("field: reason"): docs/API.md, "Conventions", asks for the field, not
// for the wording.
func (ts *testServer) expectField(r response, field string) {
	ts.t.Helper()
	ts.expect(r, http.StatusBadRequest, "")
	if msg := r.errorMessage(ts.t); !strings.HasPrefix(msg, field+": ") {
		ts.t.Fatalf("error %q does not name the field %q", msg, field)
	}
}

// expectError checks r against an expected error: a field name (the
// message must name it), an exact message, or, with neither, any message
// in an {"error": "..."} body.
func (ts *testServer) expectError(r response, status int, msg, field string) {
	ts.t.Helper()
	if field != "" {
		ts.expectField(r, field)
		return
	}
	ts.expect(r, status, msg)
	if msg == "" {
		r.errorMessage(ts.t)
	}
}

// iso renders t as the API writes timestamps.
func iso(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// createMarket creates a market as the admin session; fields override the
// defaults (closes in a day from the server's clock at testEpoch or the
// real time, whichever is later).
func (ts *testServer) createMarket(adminSession string, fields map[string]any) wire.Market {
	ts.t.Helper()
	body := map[string]any{
		"title":       "Will it rain?",
		"description": "Resolves yes if it rains.",
		"category":    "weather",
		"closes_at":   iso(later(24 * time.Hour)),
	}
	for k, v := range fields {
		if v == nil {
			delete(body, k)
			continue
		}
		body[k] = v
	}
	var m wire.Market
	ts.decode(ts.do("POST", "/api/markets", auth{session: adminSession}, jsonBody(body)), http.StatusCreated, &m)
	return m
}

// later is d after both testEpoch and the real time, so that a closing
// time is in the future for test clocks and real ones alike.
func later(d time.Duration) time.Time {
	base := testEpoch
	if now := time.Now(); now.After(base) {
		base = now
	}
	return base.Add(d)
}

// market reads a market by ID.
func (ts *testServer) market(id string) wire.Market {
	ts.t.Helper()
	var m wire.Market
	ts.decode(ts.do("GET", "/api/markets/"+id, auth{}, ""), http.StatusOK, &m)
	return m
}

// trade posts a reference-shape trade and expects it to succeed.
func (ts *testServer) trade(a auth, marketID, side, typ, shares string) wire.Trade {
	ts.t.Helper()
	body := fmt.Sprintf(`{"market_id":%q,"side":%q,"type":%q,"shares":%s}`, marketID, side, typ, shares)
	var out wire.Trade
	ts.decode(ts.do("POST", "/api/markets/trade", a, body), http.StatusOK, &out)
	return out
}

func (ts *testServer) splitMerge(a auth, marketID, typ, amount string) wire.SplitMerge {
	ts.t.Helper()
	body := fmt.Sprintf(`{"market_id":%q,"type":%q,"amount":%s}`, marketID, typ, amount)
	var out wire.SplitMerge
	ts.decode(ts.do("POST", "/api/markets/split-merge", a, body), http.StatusOK, &out)
	return out
}

func (ts *testServer) profile(a auth) wire.Profile {
	ts.t.Helper()
	var p wire.Profile
	ts.decode(ts.do("GET", "/api/agents/me", a, ""), http.StatusOK, &p)
	return p
}

// heldPosition returns the caller's position in a market and side, zero when
// there is none.
func heldPosition(p wire.Profile, marketID, side string) wire.Position {
	for _, pos := range p.Positions {
		if pos.MarketID.String() == marketID && pos.Side == side {
			return pos
		}
	}
	return wire.Position{}
}

func (ts *testServer) points(a auth, query string) wire.Points {
	ts.t.Helper()
	var p wire.Points
	ts.decode(ts.do("GET", "/api/points"+query, a, ""), http.StatusOK, &p)
	return p
}

// observe captures what a refused request must leave alone: the caller's
// balance, positions and ledger, and the market's q, prices, volume and
// status. It returns the raw bodies, so that any difference shows.
func (ts *testServer) observe(a auth, marketID string) string {
	ts.t.Helper()
	var b strings.Builder
	for _, path := range []string{"/api/portfolio", "/api/points?limit=1000"} {
		r := ts.do("GET", path, a, "")
		ts.expect(r, http.StatusOK, "")
		b.Write(r.body)
		b.WriteByte('\n')
	}
	if marketID != "" {
		if r := ts.do("GET", "/api/markets/"+marketID, auth{}, ""); r.status == http.StatusOK {
			b.Write(r.body)
		}
	}
	return b.String()
}

// unchanged fails the test if the state observed now differs from before.
func (ts *testServer) unchanged(a auth, marketID, before string) {
	ts.t.Helper()
	if after := ts.observe(a, marketID); after != before {
		ts.t.Fatalf("a refused request changed the state:\nbefore %s\nafter  %s", before, after)
	}
}

// fieldKind is what a response field must hold.
type fieldKind int

const (
	kindString fieldKind = iota
	kindUUID
	kindTime
	kindTimeOrNull
	kindNumber
	kindInteger
	kindObject
	kindArray
	kindNull
	kindStringOrNull
)

// checkFields fails the test unless obj has every field of want with the
// kind it names.
func checkFields(t *testing.T, what string, obj map[string]any, want map[string]fieldKind) {
	t.Helper()
	for name, kind := range want {
		v, ok := obj[name]
		if !ok {
			t.Errorf("%s: no field %q in %v", what, name, obj)
			continue
		}
		if err := checkKind(v, kind); err != nil {
			t.Errorf("%s: field %q = %#v: %v", what, name, v, err)
		}
	}
}

func checkKind(v any, kind fieldKind) error {
	s, isString := v.(string)
	f, isNumber := v.(float64)
	switch kind {
	case kindString:
		if !isString {
			return fmt.Errorf("not a string")
		}
	case kindStringOrNull:
		if v != nil && !isString {
			return fmt.Errorf("neither a string nor null")
		}
	case kindUUID:
		if id, err := uuid.Parse(s); !isString || err != nil || id.String() != s {
			return fmt.Errorf("not a canonical UUID string")
		}
	case kindTimeOrNull:
		if v == nil {
			return nil
		}
		fallthrough
	case kindTime:
		if _, err := time.Parse(time.RFC3339Nano, s); !isString || err != nil || !strings.HasSuffix(s, "Z") {
			return fmt.Errorf("not an ISO 8601 UTC timestamp with a Z")
		}
	case kindNumber:
		if !isNumber {
			return fmt.Errorf("not a number")
		}
	case kindInteger:
		if !isNumber || f != math.Trunc(f) {
			return fmt.Errorf("not an integer")
		}
	case kindObject:
		if _, ok := v.(map[string]any); !ok {
			return fmt.Errorf("not an object")
		}
	case kindArray:
		if _, ok := v.([]any); !ok {
			return fmt.Errorf("not an array")
		}
	case kindNull:
		if v != nil {
			return fmt.Errorf("not null")
		}
	}
	return nil
}

// marketFields are the fields of a market object (docs/API.md, "The market
// object"). Outcome and resolved_at are null until settled.
var marketFields = map[string]fieldKind{
	"id": kindUUID, "title": kindString, "description": kindString, "category": kindString,
	"prices": kindObject, "multipliers": kindObject, "liquidity": kindObject,
	"closes_at": kindTime, "created_at": kindTime, "status": kindString,
	"outcome": kindStringOrNull, "volume": kindNumber, "resolved_at": kindTimeOrNull,
}

// checkMarketObject checks the fields and types of one market object,
// nested objects included.
func checkMarketObject(t *testing.T, m map[string]any) {
	t.Helper()
	checkFields(t, "market", m, marketFields)
	for _, pair := range []string{"prices", "multipliers"} {
		if o, ok := m[pair].(map[string]any); ok {
			checkFields(t, "market."+pair, o, map[string]fieldKind{"yes": kindNumber, "no": kindNumber})
		}
	}
	if o, ok := m["liquidity"].(map[string]any); ok {
		checkFields(t, "market.liquidity", o, map[string]fieldKind{"alpha": kindNumber, "q_yes": kindNumber, "q_no": kindNumber})
	}
}

// logBuffer collects a server's log lines; the server writes from its
// request goroutines while the test reads.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer // guarded by mu
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func newLogBuffer() (*logBuffer, *slog.Logger) {
	lb := &logBuffer{}
	return lb, slog.New(slog.NewTextHandler(lb, nil))
}
