package transport

import (
	"context"
	"crypto/sha256"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"marketd/core"
	"marketd/internal/memjournal"
)

// TestLoginRefusalWaitsForPasswordChange: a login refused for a password
// that a change not yet durable has replaced is answered only once that
// change is: answered before, a crash could take the change back and leave
// the refusal standing on a password that is the account's again.
func TestLoginRefusalWaitsForPasswordChange(t *testing.T) {
	j, srv, url := heldServer(t)
	post := func(path, body string) int {
		resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Error(err)
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post("/api/auth/register", `{"name":"alice","password":"first-password"}`); code != http.StatusCreated {
		t.Fatalf("register: %d", code)
	}
	j.Hold()
	before := j.Appended()
	changed := make(chan error, 1)
	go func() { changed <- srv.ResetPassword(context.Background(), "alice", "second-password") }()
	j.WaitUntil(func(s memjournal.State) bool { return len(s.Records) > before })
	code, early := answeredEarly(j, func() int {
		return post("/api/auth/login", `{"name":"alice","password":"first-password"}`)
	})
	if code != http.StatusUnauthorized {
		t.Errorf("login with the old password: %d, want 401", code)
	}
	if early {
		t.Error("the login was refused while the password change it rests on was not durable")
	}
	if err := <-changed; err != nil {
		t.Fatal(err)
	}
}

// TestAuthRefusalWaitsForRevocation: a request refused for a session whose
// logout, or a key whose revocation, is not durable yet is answered only
// once it is: a crash could otherwise take the end back and leave the
// refusal standing on a credential that works again.
func TestAuthRefusalWaitsForRevocation(t *testing.T) {
	for _, kind := range []string{"session", "key"} {
		t.Run(kind, func(t *testing.T) {
			j, srv, url := heldServer(t)
			resp, err := http.Post(url+"/api/auth/register", "application/json",
				strings.NewReader(`{"name":"alice","password":"first-password"}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			var cookie *http.Cookie
			for _, c := range resp.Cookies() {
				if c.Name == sessionCookie {
					cookie = c
				}
			}
			if cookie == nil {
				t.Fatal("no session cookie")
			}
			a, _ := srv.eng.AccountByName("alice")
			literal := "svc_live_" + strings.Repeat("ab", 16)
			key, err := srv.eng.CreateKey(context.Background(), core.NewKey{Account: a.ID, Name: "k",
				Hash: sha256.Sum256([]byte(literal)), Prefix: literal[:core.KeyPrefixLen], Scopes: core.ScopeRead})
			if err != nil {
				t.Fatal(err)
			}
			me := func() int {
				req, _ := http.NewRequest(http.MethodGet, url+"/api/agents/me", nil)
				if kind == "key" {
					req.Header.Set("Authorization", "Bearer "+literal)
				} else {
					req.AddCookie(cookie)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return 0
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			if code := me(); code != http.StatusOK {
				t.Fatalf("before the revocation: %d", code)
			}
			j.Hold()
			before := j.Appended()
			ended := make(chan error, 1)
			go func() {
				if kind == "key" {
					_, err := srv.eng.RevokeKey(context.Background(), a.ID, key.ID)
					ended <- err
					return
				}
				ended <- srv.eng.RevokeSession(context.Background(), sha256.Sum256([]byte(cookie.Value)))
			}()
			j.WaitUntil(func(s memjournal.State) bool { return len(s.Records) > before })
			code, early := answeredEarly(j, me)
			if code != http.StatusUnauthorized {
				t.Errorf("after the revocation: %d, want 401", code)
			}
			if early {
				t.Errorf("the %s was refused while its revocation was not durable", kind)
			}
			if err := <-ended; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// answeredEarly runs request while j holds back a change, and reports its
// status and whether it answered before the change was durable (it is
// released either way).
func answeredEarly(j *memjournal.Journal, request func() int) (code int, early bool) {
	var returned atomic.Bool
	codes := make(chan int, 1)
	go func() {
		codes <- request()
		returned.Store(true)
		j.Wake()
	}()
	j.WaitUntil(func(s memjournal.State) bool { return returned.Load() || s.Waiters > 0 })
	early = returned.Load()
	j.Release()
	return <-codes, early
}

// heldServer is a server over an in-memory journal that a test can hold
// back, on a loopback port.
func heldServer(t *testing.T) (*memjournal.Journal, *Server, string) {
	t.Helper()
	j := memjournal.New()
	eng := core.NewEngine(core.NewState(), j, core.Config{CloseInterval: -1, OracleInterval: -1, UsageFlushInterval: -1})
	srv := New(eng, Config{Logger: quietLogger, PasswordCost: 4, RegistrationsPerHour: -1, PasswordChecksPerMinute: -1,
		KeyChangesPerHour: -1})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		eng.Close()
	})
	return j, srv, "http://" + ln.Addr().String()
}
