package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeviceCookieAcrossRestart: the device cookie an owner's browser got
// before a restart still exempts it from others' failed logins after it,
// because its key is kept in the data directory (docs/API.md, "Failed
// logins and password hashing"); without the cookie the same login is
// refused. It failed before device cookies: the right password got 429.
func TestDeviceCookieAcrossRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := procOptions{dataDir: dir, args: []string{"-trusted-proxies", "127.0.0.1/32"}}
	p := startProc(t, "before restart", opts)
	c := p.client(nil)
	login := func(c *client, addr, device, pw string) reply {
		t.Helper()
		h := map[string]string{"X-Forwarded-For": addr}
		if device != "" {
			h["Cookie"] = "device=" + device
		}
		body := []byte(fmt.Sprintf(`{"name":"admin","password":%q}`, pw))
		r, err := c.tryRaw(http.MethodPost, "/api/auth/login", cred{}, body, h)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := login(c, "198.51.100.1", "", testAdminPassword)
	var device string
	for _, ck := range r.cookies {
		if ck.Name == "device" {
			device = ck.Value
		}
	}
	if r.status != http.StatusOK || device == "" {
		t.Fatalf("login: %d, device cookie %q", r.status, device)
	}
	if code := p.terminate(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if fi, err := os.Stat(filepath.Join(dir, deviceKeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("device key file: %v, %v", fi, err)
	}

	p = startProc(t, "after restart", opts)
	c = p.client(nil)
	for i := range 60 {
		login(c, fmt.Sprintf("203.0.113.%d", i), "", "wrong-password")
	}
	if r := login(c, "198.51.100.2", "", testAdminPassword); r.status != http.StatusTooManyRequests {
		t.Errorf("login without a device cookie after 60 failures: %d, want 429", r.status)
	}
	if r := login(c, "198.51.100.2", device, testAdminPassword); r.status != http.StatusOK {
		t.Errorf("login with the device cookie from before the restart: %d %s, want 200", r.status, r.body)
	}
	if code := p.terminate(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

// TestResetAdminPassword: -admin-password never changes an existing
// admin's password by itself (it says so in the log); with
// -reset-admin-password it does, and every admin session ends. It failed
// before: the flag did not exist, so the admin could not be reset.
func TestResetAdminPassword(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const newPW = "a-brand-new-admin-pw"
	loginStatus := func(c *client, pw string) int {
		t.Helper()
		r, err := c.try(http.MethodPost, "/api/auth/login", cred{}, map[string]any{"name": "admin", "password": pw})
		if err != nil {
			t.Fatal(err)
		}
		return r.status
	}
	p := startProc(t, "first", procOptions{dataDir: dir})
	c := p.client(nil)
	old := c.login("admin", testAdminPassword)
	if code := p.terminate(); code != 0 {
		t.Fatalf("exit code %d", code)
	}

	p = startProc(t, "changed flag", procOptions{dataDir: dir, args: []string{"-admin-password", newPW}})
	c = p.client(nil)
	if got := loginStatus(c, testAdminPassword); got != http.StatusOK {
		t.Errorf("old password after a changed -admin-password: %d, want 200 (no silent reset)", got)
	}
	if got := loginStatus(c, newPW); got != http.StatusUnauthorized {
		t.Errorf("new password without -reset-admin-password: %d, want 401", got)
	}
	if _, err := p.stderr.waitFor(func(s string) bool { return strings.Contains(s, "-reset-admin-password") }, 0); err != nil {
		t.Errorf("no log line about the ignored -admin-password: %v", err)
	}
	if code := p.terminate(); code != 0 {
		t.Fatalf("exit code %d", code)
	}

	p = startProc(t, "reset", procOptions{dataDir: dir, args: []string{"-admin-password", newPW, "-reset-admin-password"}})
	c = p.client(nil)
	if got := loginStatus(c, testAdminPassword); got != http.StatusUnauthorized {
		t.Errorf("old password after the reset: %d, want 401", got)
	}
	if got := loginStatus(c, newPW); got != http.StatusOK {
		t.Errorf("new password after the reset: %d, want 200", got)
	}
	if r := c.do(http.MethodGet, "/api/agents/me", sessionCred(old), nil); r.status != http.StatusUnauthorized {
		t.Errorf("session from before the reset: %d, want 401", r.status)
	}
	if strings.Contains(p.output(), newPW) || strings.Contains(p.output(), testAdminPassword) {
		t.Error("a password appears in the server's output")
	}
	if code := p.terminate(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	// The password change is in the log like any other change: the
	// offline checker replays it and finds every invariant holding.
	if code, out := runChecker(t, "-data", dir); code != 0 {
		t.Errorf("marketd check after the reset: exit %d\n%s", code, out)
	}
}
