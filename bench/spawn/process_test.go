package spawn

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// childEnv makes the test binary a stand-in for marketd (TestMain): it
// logs a listening line and waits for SIGTERM.
const childEnv = "SPAWN_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM)
		fmt.Println("time=0 level=INFO msg=listening addr=127.0.0.1:1")
		<-sig
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestAdminPasswordNotOnCommandLine: the admin's password reaches the
// child in its environment only; its command line, readable by any local
// user, does not carry it.
func TestAdminPasswordNotOnCommandLine(t *testing.T) {
	const pw = "s3cret-for-the-child"
	t.Setenv(childEnv, "1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := Start(ctx, Options{Binary: os.Args[0], DataDir: t.TempDir(), AdminPassword: pw})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Stop(ctx); err != nil {
			t.Error(err)
		}
	}()
	proc := "/proc/" + strconv.Itoa(p.Pid())
	cmdline, err := os.ReadFile(proc + "/cmdline")
	if err != nil {
		t.Skipf("spawn: cannot read the child's command line (%v): no /proc here", err)
	}
	if bytes.Contains(cmdline, []byte(pw)) {
		t.Errorf("the child's command line %q carries the admin password", bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
	}
	environ, err := os.ReadFile(proc + "/environ")
	if err != nil {
		t.Fatalf("read the child's environment: %v", err)
	}
	if !bytes.Contains(environ, []byte("\x00"+adminPasswordEnv+"="+pw+"\x00")) {
		t.Errorf("the child's environment does not set %s", adminPasswordEnv)
	}
}
