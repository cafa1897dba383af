package core

import (
	"sync"
	"testing"
	"unsafe"
)

// TestCommandTradePartsInFiveLines holds the command's layout to what its
// comment promises: the parts of a command that a trade touches (op to
// applied, the result, the request) lie in five whole cache lines of a
// command made as the engine's pool makes it, so that a trade's caller,
// waking with its command cold, brings in five lines of it and no more.
func TestCommandTradePartsInFiveLines(t *testing.T) {
	// Through the pool, as the engine's own commands: on the heap.
	pool := sync.Pool{New: func() any { return newCommand() }}
	c := pool.Get().(*command)
	var hot command
	// The trade's parts, in the order of the command's fields.
	start := unsafe.Offsetof(hot.op)
	end := unsafe.Offsetof(hot.trade) + unsafe.Sizeof(hot.trade)
	for _, f := range []struct {
		name string
		off  uintptr
	}{
		{"acted", unsafe.Offsetof(hot.acted)},
		{"acct", unsafe.Offsetof(hot.acct)},
		{"idem", unsafe.Offsetof(hot.idem)},
		{"done", unsafe.Offsetof(hot.done)},
		{"applied", unsafe.Offsetof(hot.applied)},
		{"tradeRes", unsafe.Offsetof(hot.tradeRes)},
	} {
		if f.off < start || f.off >= end {
			t.Errorf("%s at byte %d, outside the trade's bytes [%d, %d)", f.name, f.off, start, end)
		}
	}
	base := uintptr(unsafe.Pointer(c))
	first, last := (base+start)/cacheLineBytes, (base+end-1)/cacheLineBytes
	if n := last - first + 1; n > 5 {
		t.Errorf("a trade's parts of a command at %#x, bytes [%d, %d), span %d cache lines, want 5", base, start, end, n)
	}
}
