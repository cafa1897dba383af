package baseline

import (
	"context"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestCloseRightAfterServe closes each server as soon as it is made, before
// its serving goroutine has run: on one processor that goroutine runs only
// once Close blocks. A shutdown that finds no listener registered yet does
// nothing, and the server must still stop rather than serve on forever
// with Close waiting for it (a baseline process whose parent ends at once).
func TestCloseRightAfterServe(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, name := range []string{"noop", "fsync-only", "least-trade"} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var s *Server
		switch name {
		case "noop":
			s = ServeNoop(ln)
		case "fsync-only":
			s, err = ServeFsyncOnly(ln, t.TempDir(), CommitOptions{})
		default:
			s, err = ServeLeastTrade(ln, t.TempDir(), LeastSetup{Markets: []uuid.UUID{uuid.New()}}, CommitOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
		closed := make(chan error, 1)
		go func() { closed <- s.Close(context.Background()) }()
		select {
		case err := <-closed:
			if err != nil {
				t.Errorf("%s: close: %v", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Close right after the server was made has not returned in 10 s", name)
		}
	}
}
