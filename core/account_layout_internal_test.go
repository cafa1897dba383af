package core

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/google/uuid"
)

// TestAccountHotFieldsInFirstLines holds the account's layout, and its
// companion's, to what their comments promise: the fields a trade touches
// in the account's first cache line and in its companion's first two
// (the positions and the fills in the first, the ledgers in the second),
// both sizes a whole number of lines, and the arena's accounts and
// companions starting on a line, so that a trade touches three lines of
// an account and no more; the id and the referrer, which a trade does not
// read, after the first.
func TestAccountHotFieldsInFirstLines(t *testing.T) {
	var a account
	var r accountRefs
	for _, size := range []uintptr{unsafe.Sizeof(a), unsafe.Sizeof(r)} {
		if size%cacheLineBytes != 0 {
			t.Errorf("account or its companion is %d bytes, not a whole number of %d-byte lines", size, cacheLineBytes)
		}
	}
	if size := unsafe.Sizeof(r.fills); size != cacheLineBytes/2 {
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
		{"mode", unsafe.Offsetof(a.mode), unsafe.Sizeof(a.mode), 0, false},
		{"referred", unsafe.Offsetof(a.referred), unsafe.Sizeof(a.referred), 0, false},
		{"placed", unsafe.Offsetof(a.placed), unsafe.Sizeof(a.placed), 0, false},
		{"ref", unsafe.Offsetof(a.ref), unsafe.Sizeof(a.ref), 0, false},
		{"id", unsafe.Offsetof(a.id), unsafe.Sizeof(a.id), 1, false},
		{"referrer", unsafe.Offsetof(a.referrer), unsafe.Sizeof(a.referrer), 1, false},
		{"companion's positions", unsafe.Offsetof(r.positions), unsafe.Sizeof(r.positions), 0, false},
		{"companion's fills", unsafe.Offsetof(r.fills), unsafe.Sizeof(r.fills), 0, false},
		{"companion's ledger", unsafe.Offsetof(r.ledger), unsafe.Sizeof(r.ledger), 1, true},
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
		if uintptr(c.n)*(unsafe.Sizeof(a)+unsafe.Sizeof(r)) <= 32<<10 {
			continue
		}
		first := arenaObj[account](c, 0)
		if p := uintptr(unsafe.Pointer(first)); p%cacheLineBytes != 0 {
			t.Errorf("an array of %d accounts at %#x: not on a cache line", c.n, p)
		}
		if p := uintptr(unsafe.Pointer(first.refs())); p%cacheLineBytes != 0 {
			t.Errorf("the companions of an array of %d accounts at %#x: not on a cache line", c.n, p)
		}
	}
}

// TestAccountHasNoPointers: every pointer an account has is in its
// companion, so that the collector's mark does not read the accounts
// (arena.go). A field with a pointer added to account fails it.
func TestAccountHasNoPointers(t *testing.T) {
	if path := pointerIn(reflect.TypeFor[account](), "account"); path != "" {
		t.Errorf("%s holds a pointer: move it to accountRefs", path)
	}
	if path := pointerIn(reflect.TypeFor[accountRefs](), "accountRefs"); path == "" {
		t.Errorf("accountRefs holds no pointer: the test's check finds none")
	}
}

// pointerIn returns the path of a field of typ that holds a pointer, or
// "" when none does.
func pointerIn(typ reflect.Type, path string) string {
	switch typ.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.String, reflect.Interface,
		reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return path
	case reflect.Array:
		if typ.Len() == 0 {
			return ""
		}
		return pointerIn(typ.Elem(), path+"[]")
	case reflect.Struct:
		for i := range typ.NumField() {
			if p := pointerIn(typ.Field(i).Type, path+"."+typ.Field(i).Name); p != "" {
				return p
			}
		}
	}
	return ""
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
