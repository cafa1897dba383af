package core

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/google/uuid"
)

// TestAccountHotFieldsInFirstLines holds the account's layout to what its
// comment promises: the fields a trade touches in its first three cache
// lines (the positions and the fills in the second, the ledgers in the
// third), the size a whole number of lines, and the arena's accounts
// starting on a line, so that a trade touches three of an account's
// lines and no more; the id and the referrer, which a trade does not
// read, after them.
func TestAccountHotFieldsInFirstLines(t *testing.T) {
	var a account
	if size := unsafe.Sizeof(a); size%cacheLineBytes != 0 {
		t.Errorf("account is %d bytes, not a whole number of %d-byte lines", size, cacheLineBytes)
	}
	if size := unsafe.Sizeof(a.fills); size != cacheLineBytes/2 {
		t.Errorf("a chunkList header is %d bytes, want %d: two to a line", size, cacheLineBytes/2)
	}
	line := func(off uintptr) uintptr { return off / cacheLineBytes }
	for _, f := range []struct {
		name       string
		off, size  uintptr
		wantLine   uintptr
		wholeLines bool
	}{
		{"mu", unsafe.Offsetof(a.mu), unsafe.Sizeof(a.mu), 0, false},
		{"lsn", unsafe.Offsetof(a.lsn), unsafe.Sizeof(a.lsn), 0, false},
		{"balances", unsafe.Offsetof(a.balances), unsafe.Sizeof(a.balances), 0, false},
		{"volumeKP", unsafe.Offsetof(a.volumeKP), unsafe.Sizeof(a.volumeKP), 0, false},
		{"bonusesKP", unsafe.Offsetof(a.bonusesKP), unsafe.Sizeof(a.bonusesKP), 0, false},
		{"reasons", unsafe.Offsetof(a.reasons), unsafe.Sizeof(a.reasons), 0, false},
		{"mode", unsafe.Offsetof(a.mode), unsafe.Sizeof(a.mode), 0, false},
		{"referred", unsafe.Offsetof(a.referred), unsafe.Sizeof(a.referred), 0, false},
		{"positions", unsafe.Offsetof(a.positions), unsafe.Sizeof(a.positions), 1, false},
		{"fills", unsafe.Offsetof(a.fills), unsafe.Sizeof(a.fills), 1, false},
		{"ledger", unsafe.Offsetof(a.ledger), unsafe.Sizeof(a.ledger), 2, true},
		{"id", unsafe.Offsetof(a.id), unsafe.Sizeof(a.id), 3, false},
		{"referrer", unsafe.Offsetof(a.referrer), unsafe.Sizeof(a.referrer), 3, false},
	} {
		first, last := line(f.off), line(f.off+f.size-1)
		if first != f.wantLine || last != f.wantLine {
			t.Errorf("%s at bytes [%d, %d): lines %d-%d, want line %d only", f.name, f.off, f.off+f.size, first, last, f.wantLine)
		}
		if f.wholeLines && (f.off%cacheLineBytes != 0 || f.size != cacheLineBytes) {
			t.Errorf("%s at bytes [%d, %d): not one whole line", f.name, f.off, f.off+f.size)
		}
	}
	// The arena's arrays: one larger than 32 KiB is a large object of the
	// runtime's, which starts on a page. A smaller one (the first 56
	// accounts of a state) comes after the 8-byte header the runtime puts
	// before a small object with pointers, and is off the line by it.
	s := NewState()
	for range 2*arenaMaxChunk + 100 {
		s.newAccount(uuid.New())
	}
	for _, c := range *s.accountMem.dir.Load() {
		if uintptr(cap(c))*unsafe.Sizeof(a) <= 32<<10 {
			continue
		}
		if p := uintptr(unsafe.Pointer(unsafe.SliceData(c))); p%cacheLineBytes != 0 {
			t.Errorf("an array of %d accounts at %#x: not on a cache line", cap(c), p)
		}
	}
}

// TestMarketsShareNoLine: markets sit side by side in the state's arena,
// and each one's goroutine writes its first and last fields per trade, so
// the market ends in a whole cache line that no field uses: whatever the
// array's alignment, no line holds fields of two markets.
func TestMarketsShareNoLine(t *testing.T) {
	typ := reflect.TypeFor[market]()
	var end uintptr
	for i := range typ.NumField() {
		if f := typ.Field(i); f.Name != "_" {
			end = max(end, f.Offset+f.Type.Size())
		}
	}
	if size := typ.Size(); size-end < cacheLineBytes {
		t.Errorf("market is %d bytes, its last field ends at %d: %d bytes after it, want at least %d", size, end, size-end, cacheLineBytes)
	}
}
