package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"marketd/internal/apiclient"
)

// backupPasswordEnv names the environment variable holding the admin's
// password for `marketd backup`, the one the server's -admin-password
// reads too: a password on the command line would show in ps. The backup
// takes a session, never an API key (docs/API.md,
// "POST /api/admin/backup").
const backupPasswordEnv = "MARKETD_ADMIN_PASSWORD"

// backupTimeout bounds the wait for the server's answer: a backup of a
// large state takes as long as a snapshot of it.
const backupTimeout = 10 * time.Minute

// maxBackupAnswerBytes bounds the answer read.
const maxBackupAnswerBytes = 64 << 10

// runBackup is `marketd backup`: it logs in as the admin, asks the running
// server for an online backup (POST /api/admin/backup) with that session,
// logs out, and prints where the backup was written. It returns the exit
// status.
func runBackup(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("marketd backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "http://127.0.0.1:8080", "base URL of the running server")
	name := fs.String("name", "", "name of the backup: a directory created under the server's -backup-dir (required)")
	user := fs.String("user", "admin", "name of the admin account to log in as")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	password := getenv(backupPasswordEnv)
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "marketd backup: unexpected arguments %q\n", fs.Args())
		return 2
	case *name == "":
		fmt.Fprintln(stderr, "marketd backup: -name is required")
		return 2
	case password == "":
		fmt.Fprintf(stderr, "marketd backup: set %s to the password of the admin account (-user)\n", backupPasswordEnv)
		return 2
	}
	hc := &http.Client{Timeout: backupTimeout}
	base := strings.TrimSuffix(*url, "/")
	status, answer, cookies, err := postJSON(hc, base+"/api/auth/login", nil, map[string]string{"name": *user, "password": password})
	if err != nil {
		fmt.Fprintf(stderr, "marketd backup: log in: %v\n", err)
		return 1
	}
	var session *http.Cookie
	for _, c := range cookies {
		if c.Name == apiclient.SessionCookie {
			session = c
		}
	}
	if status != http.StatusOK || session == nil {
		fmt.Fprintf(stderr, "marketd backup: log in as %s: %d: %s\n", *user, status, answer)
		return 1
	}
	status, answer, _, err = postJSON(hc, base+"/api/admin/backup", session, map[string]string{"name": *name})
	// The session served its one purpose: end it whatever the backup's
	// outcome, so that no live admin session outlasts the command.
	if lstatus, out, _, lerr := postJSON(hc, base+"/api/auth/logout", session, nil); lerr != nil {
		fmt.Fprintf(stderr, "marketd backup: log out: %v\n", lerr)
	} else if lstatus != http.StatusOK {
		fmt.Fprintf(stderr, "marketd backup: log out: %d: %s\n", lstatus, out)
	}
	if err != nil {
		fmt.Fprintf(stderr, "marketd backup: %v\n", err)
		return 1
	}
	if status != http.StatusCreated {
		fmt.Fprintf(stderr, "marketd backup: %d: %s\n", status, answer)
		return 1
	}
	var out struct {
		Dir string `json:"dir"`
	}
	if err := json.Unmarshal(answer, &out); err != nil {
		fmt.Fprintf(stderr, "marketd backup: answer %s: %v\n", answer, err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\ncheck it with: marketd check -data %s\n", answer, out.Dir)
	return 0
}

// postJSON posts body (nil: none) as JSON with the session cookie, when
// not nil, and returns the status, at most maxBackupAnswerBytes of the
// answer and its cookies.
func postJSON(hc *http.Client, url string, session *http.Cookie, body any) (status int, answer []byte, cookies []*http.Cookie, err error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(http.MethodPost, url, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if session != nil {
		req.AddCookie(&http.Cookie{Name: session.Name, Value: session.Value})
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	answer, err = io.ReadAll(io.LimitReader(resp.Body, maxBackupAnswerBytes))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("read the answer: %w", err)
	}
	return resp.StatusCode, answer, resp.Cookies(), nil
}
