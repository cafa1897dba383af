package snapshot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/internal/vfs"
)

// threadNiceOf is threadNice for the test's goroutine, locked to its
// thread.
func threadNiceOf(t *testing.T) int {
	t.Helper()
	n, err := threadNice()
	if err != nil {
		t.Fatalf("getpriority: %v", err)
	}
	return n
}

// threadsAtNice returns the ids of the process's threads whose nice value
// is nice, from /proc/self/task/*/stat.
func threadsAtNice(t *testing.T, nice int) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/self/task/*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var tids []int
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread ended
		}
		// After the command's closing parenthesis: field 3, the state,
		// on; the nice value is field 19.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if v, err := strconv.Atoi(fields[19-3]); err == nil && v == nice {
			tid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			tids = append(tids, tid)
		}
	}
	return tids
}

// goroutinesAtNice runs goroutines over the runtime's threads, each
// reading its thread's nice value many times, and returns how many reads
// found nice.
func goroutinesAtNice(nice int) int {
	var found atomic.Int32
	var wg sync.WaitGroup
	for range 4 * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for range 200 {
				runtime.LockOSThread()
				if n, err := threadNice(); err == nil && n == nice {
					found.Add(1)
				}
				runtime.UnlockOSThread()
				runtime.Gosched()
			}
		})
	}
	wg.Wait()
	return int(found.Load())
}

// threadTestState returns a state of 300 accounts and 3 keys: a supply
// chunk, a keys' chunk and several of accounts at 50 objects a chunk.
func threadTestState(t *testing.T) *core.State {
	t.Helper()
	st := core.NewState()
	img := &core.Record{Kind: core.KindImage}
	for i := range 300 {
		img.Accounts = append(img.Accounts, core.AccountChange{ID: uuid.New(), Prev: uint64(i + 1),
			Info: &core.AccountInfo{Name: fmt.Sprintf("nice%d", i), CreatedAt: 1}})
	}
	// Keys, whose chunk comes after the supply's and before the accounts'.
	for i := range 3 {
		img.Keys = append(img.Keys, core.KeyChange{Prev: uint64(1000 + i), Key: core.Key{ID: uuid.New(),
			Account: img.Accounts[i].ID, Name: fmt.Sprintf("k%d", i), Prefix: fmt.Sprintf("mk_%014d", i), CreatedAt: 1}})
	}
	if err := st.LoadImage(img); err != nil {
		t.Fatalf("load %d accounts: %v", len(img.Accounts), err)
	}
	return st
}

// TestSnapshotThreadError checks that a failure on the snapshot's own
// thread reaches the caller: a write of the file that fails while the
// accounts are written at a lowered priority fails the snapshot, naming
// the file, and leaves no temporary file. It fails when fillTemp's error
// is dropped on the way back from that thread.
func TestSnapshotThreadError(t *testing.T) {
	dir := t.TempDir()
	writes := func(o vfs.Op) bool { return o.Kind == vfs.OpWrite }
	efs := vfs.NewErrorFS(vfs.Default(), vfs.FailFrom(writes, 1))
	m := NewManager(threadTestState(t), &trimLog{}, Options{Dir: dir, FS: efs, ChunkObjects: 50,
		ThreadNice: MaxThreadNice, Logger: slog.New(slog.DiscardHandler)}, nil)
	_, err := m.take(context.Background(), newPacer(1, m.opts.ThreadNice), 0)
	if !errors.Is(err, vfs.ErrInjected) || !strings.Contains(err.Error(), "snapshot: write "+dir) {
		t.Fatalf("a snapshot whose write fails: %v, want the injected error wrapped with the file's name", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Fatalf("files left after the failed snapshot: %v", left)
	}
}

// TestSnapshotThreadNice checks a periodic snapshot's thread priority
// (priority.go): the chunks before the accounts (the supply's, the keys')
// are written at the process's priority, the accounts' at ThreadNice (or the process's when
// that is lower still, or ThreadNice is 0); the caller's thread keeps its
// priority; and after the snapshot no goroutine runs at the lowered
// priority: the thread ended, or, when it was the main thread, the
// runtime parked it for good, and the threads the runtime started while
// it ran (goroutines it started block in system calls) did not inherit
// its priority. It fails when the accounts' pass is not lowered, when it
// is lowered before the accounts, or when the thread is given back to the
// runtime.
func TestSnapshotThreadNice(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	base := threadNiceOf(t)
	if base >= MaxThreadNice {
		t.Skipf("the test runs at nice %d already: there is no lower priority to check", base)
	}
	st := threadTestState(t)
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
				n, err := threadNice()
				seen = append(seen, n)
				// Goroutines that hold threads in a system call, so that
				// the runtime may start new ones meanwhile.
				for range 4 {
					go func() {
						ts := syscall.NsecToTimespec(int64(2 * time.Millisecond))
						_ = syscall.Nanosleep(&ts, nil)
					}()
				}
				return err
			}
			if _, err := m.take(context.Background(), p, 0); err != nil {
				t.Fatal(err)
			}
			if len(seen) < 4 {
				t.Fatalf("%d chunks, want the supply's, the keys' and several of accounts", len(seen))
			}
			if seen[0] != base || seen[1] != base || seen[len(seen)-1] != tt.want {
				t.Errorf("nice values after each chunk %v: want %d for the supply's and the keys' (the first two), %d for the accounts'", seen, base, tt.want)
			}
			if got := threadNiceOf(t); got != base {
				t.Errorf("the caller's thread is at nice %d after the snapshot, want its own %d", got, base)
			}
			if tt.want == base {
				return
			}
			main := os.Getpid() // the main thread's id
			deadline := time.Now().Add(5 * time.Second)
			for tids := threadsAtNice(t, tt.want); !slices.Equal(tids, nil) && !slices.Equal(tids, []int{main}); tids = threadsAtNice(t, tt.want) {
				if time.Now().After(deadline) {
					t.Fatalf("threads %v (the main thread is %d) at nice %d 5 s after the snapshot", tids, main, tt.want)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if n := goroutinesAtNice(tt.want); n > 0 {
				t.Fatalf("goroutines ran at nice %d %d times after the snapshot", tt.want, n)
			}
		})
	}
}
