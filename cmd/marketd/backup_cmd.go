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
)

// backupKeyEnv names the environment variable holding the admin API key of
// `marketd backup`: a key on the command line would show in ps.
const backupKeyEnv = "MARKETD_API_KEY"

// backupTimeout bounds the wait for the server's answer: a backup of a
// large state takes as long as a snapshot of it.
const backupTimeout = 10 * time.Minute

// maxBackupAnswerBytes bounds the answer read.
const maxBackupAnswerBytes = 64 << 10

// runBackup is `marketd backup`: it asks a running server for an online
// backup (POST /api/admin/backup) and prints where it was written. It
// returns the exit status.
func runBackup(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("marketd backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "http://127.0.0.1:8080", "base URL of the running server")
	name := fs.String("name", "", "name of the backup: a directory created under the server's -backup-dir (required)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	key := getenv(backupKeyEnv)
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "marketd backup: unexpected arguments %q\n", fs.Args())
		return 2
	case *name == "":
		fmt.Fprintln(stderr, "marketd backup: -name is required")
		return 2
	case key == "":
		fmt.Fprintf(stderr, "marketd backup: set %s to an API key of an admin account with the admin scope\n", backupKeyEnv)
		return 2
	}
	body, err := json.Marshal(map[string]string{"name": *name})
	if err != nil {
		fmt.Fprintf(stderr, "marketd backup: %v\n", err)
		return 1
	}
	req, err := http.NewRequest(http.MethodPost, strings.TrimSuffix(*url, "/")+"/api/admin/backup", bytes.NewReader(body))
	if err != nil {
		fmt.Fprintf(stderr, "marketd backup: %v\n", err)
		return 2
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := (&http.Client{Timeout: backupTimeout}).Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "marketd backup: %v\n", err)
		return 1
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxBackupAnswerBytes))
	if err != nil {
		fmt.Fprintf(stderr, "marketd backup: read the answer: %v\n", err)
		return 1
	}
	if resp.StatusCode != http.StatusCreated {
		fmt.Fprintf(stderr, "marketd backup: %s: %s\n", resp.Status, answer)
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
