package core

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"testing"

	"github.com/google/uuid"

	"marketd/core/money"
)

// allocAccount allocates an account with ID id in r, keeping its ref.
func allocAccount(r *arena[account, accountRefs], id uuid.UUID) *account {
	return r.alloc(func(a *account, ref arenaRef) { a.id, a.ref, a.placed = id, ref, true })
}

// TestArenaKeepsAccountsInPlace: accounts allocated across many arrays
// keep their addresses and contents while more are allocated, at resolves
// each one's ref to it, and each walks them all in the order they were
// allocated.
func TestArenaKeepsAccountsInPlace(t *testing.T) {
	var r arena[account, accountRefs]
	const n = 3*arenaMaxChunk + 7
	accts := make([]*account, n)
	for i := range accts {
		a := allocAccount(&r, uuid.UUID{byte(i), byte(i >> 8), 1})
		a.balances[money.KP] = money.Amount(i)
		accts[i] = a
	}
	seen := make(map[*account]bool, n)
	refs := make(map[arenaRef]bool, n)
	for i, a := range accts {
		if seen[a] || refs[a.ref] {
			t.Fatalf("account %d shares its memory or its ref %#x with another", i, a.ref)
		}
		seen[a], refs[a.ref] = true, true
		if a.id != (uuid.UUID{byte(i), byte(i >> 8), 1}) || a.balances[money.KP] != money.Amount(i) {
			t.Fatalf("account %d changed after later allocations: id %s, balance %d", i, a.id, a.balances[money.KP])
		}
		if got := r.at(a.ref); got != a {
			t.Fatalf("account %d: at(%#x) = %p, want %p", i, a.ref, got, a)
		}
	}
	var walked []*account
	r.each(func(a *account) bool {
		walked = append(walked, a)
		return true
	})
	if len(walked) != n {
		t.Fatalf("each walked %d accounts, want %d", len(walked), n)
	}
	for i, a := range walked {
		if a != accts[i] {
			t.Fatalf("each's account %d is not the %dth allocated", i, i)
		}
	}
}

// TestArenaPartsSeeEachAccountOnce: eachPart's parts, for several counts
// of parts, see every account allocated exactly once between them, each
// part in memory order.
func TestArenaPartsSeeEachAccountOnce(t *testing.T) {
	var r arena[account, accountRefs]
	const n = 5*arenaMaxChunk + 3
	index := make(map[*account]int, n)
	for i := range n {
		index[allocAccount(&r, uuid.UUID{byte(i), byte(i >> 8), 2})] = i
	}
	for _, parts := range []int{1, 2, 3, 7} {
		seen := make(map[*account]int, n)
		for part := range parts {
			last := -1
			r.eachPart(part, parts, func(a *account) bool {
				if i := index[a]; i <= last {
					t.Fatalf("%d parts, part %d: account %d after %d", parts, part, i, last)
				} else {
					last = i
				}
				seen[a]++
				return true
			})
		}
		if len(seen) != n {
			t.Errorf("%d parts saw %d accounts, want %d", parts, len(seen), n)
		}
		for a, k := range seen {
			if k != 1 {
				t.Errorf("%d parts saw account %d %d times", parts, index[a], k)
			}
		}
	}
}

// TestPopulateKeepsContents: populate is advice about pages, whatever the
// range's alignment and size: the bytes in it stay as they were.
func TestPopulateKeepsContents(t *testing.T) {
	b := make([]byte, 3*populateMinTest+123)
	for i := range b {
		b[i] = byte(i*7 + 1)
	}
	for _, r := range [][2]int{{0, len(b)}, {3, len(b) - 5}, {1, 100}, {0, 0}} {
		populate(b[r[0]:r[1]])
	}
	for i := range b {
		if b[i] != byte(i*7+1) {
			t.Fatalf("byte %d changed to %d", i, b[i])
		}
	}
}

// populateMinTest is larger than populate's least range on every system.
const populateMinTest = 256 << 10

// TestArenaPanicsPastItsRefs: alloc gives refs up to the last array's but
// one, whose last ref plus one would be 0 in idMap's slots, and panics
// rather than give one past them. The arena's arrays before the last are
// faked (empty), so that the test allocates only the last ones.
func TestArenaPanicsPastItsRefs(t *testing.T) {
	var r arena[struct{}, struct{}]
	dir := make([]arenaChunk, arenaMaxChunks-2) // the last is full
	dir[len(dir)-1] = newArenaChunk[struct{}, struct{}](arenaMaxChunk)
	r.used = arenaMaxChunk
	r.dir.Store(&dir)
	var last arenaRef
	for range arenaMaxChunk {
		r.alloc(func(_ *struct{}, ref arenaRef) { last = ref })
	}
	if want := arenaRef((arenaMaxChunks-2)<<arenaChunkBits | (arenaMaxChunk - 1)); last != want {
		t.Fatalf("last ref %#x, want %#x", last, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("alloc past the last usable array did not panic")
		}
	}()
	r.alloc(func(*struct{}, arenaRef) {})
}

// TestArenaCompanions: each object's companion is its own, found from the
// object and its ref alone in arrays of every size, for objects and
// companions of sizes that are not multiples of each other; what is
// written into one stays there while more are allocated.
func TestArenaCompanions(t *testing.T) {
	type obj struct {
		ref arenaRef
		n   [5]uint32
	}
	type comp struct {
		s string
		v [3]uint64
	}
	var r arena[obj, comp]
	const n = 2*arenaMaxChunk + 13
	objs := make([]*obj, n)
	seen := make(map[*comp]bool, n)
	for i := range objs {
		o := r.alloc(func(o *obj, ref arenaRef) { o.ref = ref })
		o.n[4] = uint32(i)
		c := companion[obj, comp](o, o.ref)
		if seen[c] {
			t.Fatalf("object %d shares its companion", i)
		}
		seen[c] = true
		c.s, c.v[2] = strconv.Itoa(i), uint64(i)
		objs[i] = o
	}
	for i, o := range objs {
		c := companion[obj, comp](o, o.ref)
		if o.n[4] != uint32(i) || c.s != strconv.Itoa(i) || c.v[2] != uint64(i) {
			t.Fatalf("object %d: %d, companion %q %d", i, o.n[4], c.s, c.v[2])
		}
	}
}

// TestArenaCompanionsKeepTheirPointers: the collector marks what an
// account's companion points to, though the account has no pointer: the
// accounts' strings, made for the test and held by nothing else, stay
// intact over collections while garbage is allocated over freed memory.
func TestArenaCompanionsKeepTheirPointers(t *testing.T) {
	s := NewState()
	const n = arenaMaxChunk + 100
	accts := make([]*account, n)
	for i := range accts {
		a := s.newAccount(uuid.New())
		a.setInfo(&AccountInfo{Name: fmt.Sprintf("name-%d", i), PasswordHash: []byte(fmt.Sprintf("hash-%d", i))})
		accts[i] = a
	}
	for range 3 {
		runtime.GC()
		var garbage [][]byte
		for range 4 * n {
			garbage = append(garbage, bytes.Repeat([]byte{0xee}, 24))
		}
		runtime.KeepAlive(garbage)
	}
	for i, a := range accts {
		in := a.infoOf()
		if in.Name != fmt.Sprintf("name-%d", i) || string(in.PasswordHash) != fmt.Sprintf("hash-%d", i) {
			t.Fatalf("account %d: name %q, hash %q after collections", i, in.Name, in.PasswordHash)
		}
	}
}
