package transport

import (
	"context"
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
	url := "http://" + ln.Addr().String()
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

	var returned atomic.Bool
	codes := make(chan int, 1)
	go func() {
		codes <- post("/api/auth/login", `{"name":"alice","password":"first-password"}`)
		returned.Store(true)
		j.Wake()
	}()
	j.WaitUntil(func(s memjournal.State) bool { return returned.Load() || s.Waiters > 0 })
	early := returned.Load()
	j.Release()
	if code := <-codes; code != http.StatusUnauthorized {
		t.Errorf("login with the old password: %d, want 401", code)
	}
	if early {
		t.Error("the login was refused while the password change it rests on was not durable")
	}
	if err := <-changed; err != nil {
		t.Fatal(err)
	}
}
