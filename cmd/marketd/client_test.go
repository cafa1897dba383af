package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"marketd/core/money"
	"marketd/internal/apiclient"
	"marketd/transport/wire"
)

// cred is how a request authenticates: an API key, a session token, or
// nothing.
type cred struct {
	key     string
	session string
}

func keyCred(key string) cred       { return cred{key: key} }
func sessionCred(token string) cred { return cred{session: token} }

// keyUses counts the requests each API key made that the server did not
// answer with 401: what total_requests must show (docs/API.md,
// "Authentication").
type keyUses struct {
	mu sync.Mutex
	n  map[string]uint64
}

func newKeyUses() *keyUses { return &keyUses{n: map[string]uint64{}} }

func (u *keyUses) add(key string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.n[key]++
}

func (u *keyUses) get(key string) uint64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.n[key]
}

// client talks HTTP to one child.
type client struct {
	t    *testing.T
	base string
	hc   *http.Client
	uses *keyUses // nil: not counted
}

// reply is an answer as the tests look at it.
type reply struct {
	status  int
	header  http.Header
	cookies []*http.Cookie
	body    []byte
}

// session returns the session token the answer set, or "".
func (r *reply) session() string {
	return (&apiclient.Reply{Cookies: r.cookies}).Session()
}

// try sends one request; body, when not nil, is encoded as JSON. It is
// safe for concurrent use and never fails the test: an error means no
// answer arrived.
func (c *client) try(method, path string, cr cred, body any) (reply, error) {
	var raw []byte
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return reply{}, fmt.Errorf("encode body: %w", err)
		}
		raw = b
	}
	return c.tryRaw(method, path, cr, raw, nil)
}

// tryRaw is try with the body's bytes (nil: none) and more headers.
func (c *client) tryRaw(method, path string, cr cred, body []byte, headers map[string]string) (reply, error) {
	api := apiclient.Client{Base: c.base, HTTP: c.hc}
	r, err := api.Do(method, path, apiclient.Cred{Key: cr.key, Session: cr.session}, body, headers)
	if err != nil {
		return reply{}, err
	}
	if c.uses != nil && cr.key != "" && r.Status != http.StatusUnauthorized {
		c.uses.add(cr.key)
	}
	return reply{status: r.Status, header: r.Header, cookies: r.Cookies, body: r.Body}, nil
}

// do sends one request and fails the test when no answer arrives.
func (c *client) do(method, path string, cr cred, body any) reply {
	c.t.Helper()
	r, err := c.try(method, path, cr, body)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// must sends one request, fails the test unless the status is want, and
// decodes the body into out when not nil.
func (c *client) must(method, path string, cr cred, body any, want int, out any) reply {
	c.t.Helper()
	r := c.do(method, path, cr, body)
	if r.status != want {
		c.t.Fatalf("%s %s %s: status %d, want %d; body %s", method, path, jsonText(body), r.status, want, r.body)
	}
	if out != nil {
		if err := json.Unmarshal(r.body, out); err != nil {
			c.t.Fatalf("%s %s: decode %s: %v", method, path, r.body, err)
		}
	}
	return r
}

// mustError sends one request and checks the error answer: its status,
// the body's shape (apiclient.ParseError) and its message (docs/API.md,
// "Errors").
func (c *client) mustError(method, path string, cr cred, body any, want int, msg string) {
	c.t.Helper()
	r := c.must(method, path, cr, body, want, nil)
	e, err := apiclient.ParseError(apiclient.Reply{Status: r.status, Header: r.header, Body: r.body})
	if err != nil {
		c.t.Fatalf("%s %s %s: %v", method, path, jsonText(body), err)
	}
	if !strings.Contains(e.Error, msg) {
		c.t.Fatalf("%s %s %s: error %q, want it to contain %q", method, path, jsonText(body), e.Error, msg)
	}
}

// tree fetches path and returns the JSON answer as a tree of maps, slices
// and json.Numbers, for comparing whole answers.
func (c *client) tree(path string, cr cred) any {
	c.t.Helper()
	r := c.must(http.MethodGet, path, cr, nil, http.StatusOK, nil)
	d := json.NewDecoder(bytes.NewReader(r.body))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		c.t.Fatalf("GET %s: decode %s: %v", path, r.body, err)
	}
	return v
}

func jsonText(v any) string {
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// register creates an account and returns its session token and
// profile.
func (c *client) register(name string) (string, wire.Agent) {
	c.t.Helper()
	var out struct {
		Agent wire.Agent `json:"agent"`
	}
	r := c.must(http.MethodPost, "/api/auth/register", cred{},
		map[string]any{"name": name, "password": "pw-" + name + "-123"}, http.StatusCreated, &out)
	tok := r.session()
	if tok == "" {
		c.t.Fatalf("register %s: no session cookie in %v", name, r.header)
	}
	return tok, out.Agent
}

// login logs in with the password register gave name and returns the
// session token.
func (c *client) login(name, password string) string {
	c.t.Helper()
	if password == "" {
		password = "pw-" + name + "-123"
	}
	r := c.must(http.MethodPost, "/api/auth/login", cred{},
		map[string]any{"name": name, "password": password}, http.StatusOK, nil)
	tok := r.session()
	if tok == "" {
		c.t.Fatalf("login %s: no session cookie in %v", name, r.header)
	}
	return tok
}

// createMarket creates a market as admin (whose cred is given) and
// returns it.
func (c *client) createMarket(admin cred, title string, extra map[string]any) wire.Market {
	c.t.Helper()
	body := map[string]any{"title": title, "description": "e2e market " + title, "category": "e2e",
		"closes_at": "2099-01-01T00:00:00Z"}
	for k, v := range extra {
		body[k] = v
	}
	var m wire.Market
	c.must(http.MethodPost, "/api/markets", admin, body, http.StatusCreated, &m)
	return m
}

func (c *client) createKey(session cred, name string, scopes []string, extra map[string]any) wire.NewKey {
	c.t.Helper()
	body := map[string]any{"name": name, "scopes": scopes}
	for k, v := range extra {
		body[k] = v
	}
	var k wire.NewKey
	c.must(http.MethodPost, "/api/keys", session, body, http.StatusCreated, &k)
	return k
}

// trade sends a trade in the reference shape of docs/API.md, "POST
// /api/markets/trade".
func (c *client) trade(cr cred, marketID, side, typ string, shares string) wire.Trade {
	c.t.Helper()
	var tr wire.Trade
	c.must(http.MethodPost, "/api/markets/trade", cr, tradeBody(marketID, side, typ, shares), http.StatusOK, &tr)
	return tr
}

func tradeBody(marketID, side, typ, shares string) map[string]any {
	return map[string]any{"market_id": marketID, "side": side, "type": typ, "shares": json.Number(shares)}
}

func (c *client) splitMerge(cr cred, marketID, typ, amount string) wire.SplitMerge {
	c.t.Helper()
	var s wire.SplitMerge
	c.must(http.MethodPost, "/api/markets/split-merge", cr,
		map[string]any{"market_id": marketID, "type": typ, "amount": json.Number(amount)}, http.StatusOK, &s)
	return s
}

func (c *client) points(cr cred) wire.Points {
	c.t.Helper()
	var p wire.Points
	c.must(http.MethodGet, "/api/points?limit=1000", cr, nil, http.StatusOK, &p)
	if p.Count > len(p.Ledger) {
		c.t.Fatalf("ledger has %d entries, more than one page of %d", p.Count, len(p.Ledger))
	}
	return p
}

func (c *client) me(cr cred) wire.Profile {
	c.t.Helper()
	var p wire.Profile
	c.must(http.MethodGet, "/api/agents/me", cr, nil, http.StatusOK, &p)
	return p
}

func (c *client) market(id string) wire.Market {
	c.t.Helper()
	var m wire.Market
	c.must(http.MethodGet, "/api/markets/"+id, cred{}, nil, http.StatusOK, &m)
	return m
}

func (c *client) keys(session cred) map[string]wire.Key {
	c.t.Helper()
	var l struct {
		Count int        `json:"count"`
		Keys  []wire.Key `json:"keys"`
	}
	c.must(http.MethodGet, "/api/keys", session, nil, http.StatusOK, &l)
	if l.Count != len(l.Keys) {
		c.t.Fatalf("GET /api/keys: count %d, %d keys", l.Count, len(l.Keys))
	}
	out := make(map[string]wire.Key, len(l.Keys))
	for _, k := range l.Keys {
		out[k.ID.String()] = k
	}
	return out
}

func (c *client) stats(admin cred) statsJSON {
	c.t.Helper()
	var s statsJSON
	c.must(http.MethodGet, "/api/admin/stats", admin, nil, http.StatusOK, &s)
	return s
}

// The answers' shapes, as far as the tests read them (docs/API.md). Money is
// decoded exactly, as micro-units.

// heldShares returns the shares held on a market's side (0 when none).
func heldShares(p *wire.Profile, marketID, side string) money.Amount {
	for _, pos := range p.Positions {
		if pos.MarketID.String() == marketID && pos.Side == side {
			return pos.Shares
		}
	}
	return 0
}

type settleJSON struct {
	MarketID      string       `json:"market_id"`
	Outcome       string       `json:"outcome"`
	PositionsPaid int          `json:"positions_paid"`
	TotalPaid     money.Amount `json:"total_paid"`
}

type statsJSON struct {
	Accounts int `json:"accounts"`
	Markets  struct {
		Active   int `json:"active"`
		Closed   int `json:"closed"`
		Resolved int `json:"resolved"`
		Total    int `json:"total"`
	} `json:"markets"`
	Trades struct {
		KP uint64 `json:"kp"`
	} `json:"trades"`
	Volume struct {
		KP money.Amount `json:"kp"`
	} `json:"volume"`
	OpenInterest struct {
		KP money.Amount `json:"kp"`
	} `json:"open_interest"`
	ActiveKeys     int `json:"active_keys"`
	ActiveSessions int `json:"active_sessions"`
	WAL            *struct {
		LastSeq    uint64 `json:"last_seq"`
		DurableSeq uint64 `json:"durable_seq"`
	} `json:"wal"`
}

// checkLedger checks that a points answer adds up: the entries, oldest
// first, chain their balance_after from zero, and the balance is the
// newest one's.
func checkLedger(t *testing.T, who string, p wire.Points) {
	t.Helper()
	var bal money.Amount
	for i := len(p.Ledger) - 1; i >= 0; i-- {
		e := p.Ledger[i]
		bal += e.Amount
		if e.BalanceAfter != bal {
			t.Fatalf("%s: ledger entry %d (%s %s, ref %s): balance_after %s, want %s after the entries before it",
				who, len(p.Ledger)-1-i, e.TxType, e.Amount, e.RefID, e.BalanceAfter, bal)
		}
	}
	if p.Balance != bal {
		t.Fatalf("%s: balance %s, but the ledger adds up to %s", who, p.Balance, bal)
	}
}

// ledgerByRef indexes a ledger's entries by ref_id and tx_type.
func ledgerByRef(p wire.Points) map[string]wire.LedgerItem {
	out := make(map[string]wire.LedgerItem, len(p.Ledger))
	for _, e := range p.Ledger {
		out[e.TxType+"/"+e.RefID.String()] = e
	}
	return out
}
