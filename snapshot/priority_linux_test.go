package snapshot

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
)

// threadNice returns the calling thread's nice value; the caller's
// goroutine must be locked to its thread.
func threadNice(t *testing.T) int {
	t.Helper()
	prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	if err != nil {
		t.Fatalf("getpriority: %v", err)
	}
	return 20 - prio // the system call's form (priority_linux.go)
}

// threadsAtNice counts the process's threads whose nice value is nice,
// from /proc/self/task/*/stat.
func threadsAtNice(t *testing.T, nice int) int {
	t.Helper()
	stats, err := filepath.Glob("/proc/self/task/*/stat")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread ended
		}
		// After the command's closing parenthesis: field 3, the state,
		// on; the nice value is field 19.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if v, err := strconv.Atoi(fields[19-3]); err == nil && v == nice {
			n++
		}
	}
	return n
}

// TestSnapshotThreadNice checks a periodic snapshot's thread priority
// (priority.go): the chunks before the accounts are written at the
// process's priority, the accounts' at ThreadNice (or the process's when
// that is lower still, or ThreadNice is 0); the caller's thread keeps its
// priority; and the lowered thread ends with the snapshot, so that no
// other goroutine runs at its priority. It fails when the accounts' pass
// is not lowered, when it is lowered from the start, or when the thread is
// given back to the runtime.
func TestSnapshotThreadNice(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	base := threadNice(t)
	if base >= MaxThreadNice {
		t.Skipf("the test runs at nice %d already: there is no lower priority to check", base)
	}
	st := core.NewState()
	img := &core.Record{Kind: core.KindImage}
	for i := range 300 {
		img.Accounts = append(img.Accounts, core.AccountChange{ID: uuid.New(), Prev: uint64(i + 1),
			Info: &core.AccountInfo{Name: fmt.Sprintf("nice%d", i), CreatedAt: 1}})
	}
	if err := st.LoadImage(img); err != nil {
		t.Fatalf("load %d accounts: %v", len(img.Accounts), err)
	}
	for _, tt := range []struct {
		nice, want int // want: the accounts' chunks' nice value
	}{
		{0, base},
		{MaxThreadNice, MaxThreadNice},
		{base + 1, base + 1},
	} {
		t.Run(fmt.Sprintf("nice %d", tt.nice), func(t *testing.T) {
			runtime.LockOSThread() // the caller's thread, checked after
			defer runtime.UnlockOSThread()
			m := NewManager(st, &trimLog{}, Options{Dir: t.TempDir(), ChunkObjects: 50, ThreadNice: tt.nice,
				Logger: slog.New(slog.DiscardHandler)}, nil)
			p := newPacer(0.999, m.opts.ThreadNice) // below 1: wait is called after every chunk
			var seen []int                          // the snapshot thread's nice value after each chunk
			p.wait = func(context.Context, time.Duration) error {
				seen = append(seen, threadNice(t))
				return nil
			}
			if _, err := m.take(context.Background(), p, 0); err != nil {
				t.Fatal(err)
			}
			if len(seen) < 3 {
				t.Fatalf("%d chunks, want the supply's and several of accounts", len(seen))
			}
			if seen[0] != base || seen[len(seen)-1] != tt.want {
				t.Errorf("nice values after each chunk %v: want %d for the first (no accounts), %d for the accounts'", seen, base, tt.want)
			}
			if got := threadNice(t); got != base {
				t.Errorf("the caller's thread is at nice %d after the snapshot, want its own %d", got, base)
			}
			if tt.want == base {
				return
			}
			deadline := time.Now().Add(5 * time.Second)
			for threadsAtNice(t, tt.want) > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("a thread at nice %d outlived the snapshot by 5 s", tt.want)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}
