package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"marketd/core/money"
	"marketd/transport/wire"
)

// faultLoad drives a server that is expected to die or fail with the
// simplest durable operations, one at a time, and records what was
// acknowledged: each step registers an account (one record) and buys one
// share with it (one more). At most one operation is ever in flight, so
// what a restart must hold is exact: every acknowledged one, plus perhaps
// the one in flight.
type faultLoad struct {
	t      *testing.T
	c      *client
	prefix string
	market string // "" when setup did not finish
	// registered and bought hold the names whose registration or buy was
	// acknowledged; sessions their session tokens.
	registered, bought map[string]bool
	sessions           map[string]string
	// refused counts answers 503 log_failed.
	refused int
	steps   int
}

// newFaultLoad logs in as admin and creates a market; it returns a load
// with an empty market when the server died during that.
func newFaultLoad(t *testing.T, p *proc, prefix string) *faultLoad {
	l := &faultLoad{t: t, prefix: prefix, registered: map[string]bool{}, bought: map[string]bool{}, sessions: map[string]string{}}
	if p.addr == "" {
		return l
	}
	l.c = p.client(nil)
	r, err := l.c.try(http.MethodPost, "/api/auth/login", cred{}, map[string]any{"name": "admin", "password": testAdminPassword})
	if err != nil || r.status != http.StatusOK {
		return l
	}
	r, err = l.c.try(http.MethodPost, "/api/markets", sessionCred(r.session()), map[string]any{"title": "faults",
		"description": "fault tests", "category": "e2e", "closes_at": "2099-01-01T00:00:00Z"})
	if err != nil || r.status != http.StatusCreated {
		return l
	}
	var m wire.Market
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("create market: %v", err)
	}
	l.market = m.ID.String()
	return l
}

// step runs one registration and one buy. It returns false once the server
// no longer answers, or answers 503 log_failed.
func (l *faultLoad) step() bool {
	if l.market == "" {
		return false
	}
	name := fmt.Sprintf("%s%d", l.prefix, l.steps)
	l.steps++
	r, err := l.c.try(http.MethodPost, "/api/auth/register", cred{}, map[string]any{"name": name, "password": "pw-" + name + "-123"})
	if !l.answered(r, err, http.StatusCreated, "register "+name) {
		return false
	}
	l.registered[name] = true
	l.sessions[name] = r.session()
	r, err = l.c.try(http.MethodPost, "/api/markets/trade", sessionCred(r.session()), tradeBody(l.market, "yes", "buy", "1"))
	if !l.answered(r, err, http.StatusOK, "buy "+name) {
		return false
	}
	l.bought[name] = true
	return true
}

// answered reports whether the request was acknowledged with want; a
// refusal other than 503 log_failed fails the test.
func (l *faultLoad) answered(r reply, err error, want int, what string) bool {
	switch {
	case err != nil:
		return false
	case r.status == want:
		return true
	case r.status == http.StatusServiceUnavailable && errorCode(r.body) == "log_failed":
		l.refused++
		return false
	}
	l.t.Fatalf("%s: %d %s", what, r.status, r.body)
	return false
}

func errorCode(body []byte) string {
	var e struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(body, &e) // a body that is not an error has no code
	return e.Code
}

// verify checks a restarted server against what was acknowledged: every
// acknowledged registration logs in, every acknowledged buy holds its share
// (and an account whose buy was in flight holds at most one).
func (l *faultLoad) verify(p *proc) {
	l.t.Helper()
	c := p.client(nil)
	for name := range l.registered {
		tok := c.login(name, "")
		me := c.me(sessionCred(tok))
		got := heldShares(&me, l.market, "yes")
		want := money.Amount(0)
		if l.bought[name] {
			want = money.Units(1)
		}
		if got != want && (l.bought[name] || got != money.Units(1)) {
			l.t.Errorf("%s: holds %s yes shares after the restart, acknowledged buy %v", name, got, l.bought[name])
		}
	}
}
