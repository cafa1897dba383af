package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
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
