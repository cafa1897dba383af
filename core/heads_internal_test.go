package core

import (
	"testing"
	"unsafe"

	"github.com/google/uuid"

	"marketd/core/money"
)

// TestHeadArraysTake holds headArrays to its contract: every slice taken
// has the length and capacity asked for and starts zeroed, no two slices
// share an entry (each is filled with its own mark, and every mark is
// read back after all the takes), an append to a slice moves it without
// touching its neighbour, and a new array is started exactly when the
// current one has too few entries left.
func TestHeadArraysTake(t *testing.T) {
	cases := []struct {
		name     string
		arrayLen int
		takes    []int
		newArray []bool // whether take i started a new array
	}{
		{"ones fill an array, then a second", 3, []int{1, 1, 1, 1, 1}, []bool{true, false, false, true, false}},
		{"pairs leave an entry unused", 5, []int{2, 2, 2, 2}, []bool{true, false, true, false}},
		{"a whole array at a time", 2, []int{2, 2, 1}, []bool{true, true, true}},
		{"mixed sizes", 4, []int{1, 2, 2, 1, 3}, []bool{true, false, true, false, true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := headArrays[uint64]{arrayLen: c.arrayLen}
			var got [][]uint64
			var prevArray *uint64
			for i, n := range c.takes {
				s := h.take(n)
				if len(s) != n || cap(s) != n {
					t.Fatalf("take %d of %d: len %d cap %d, want both %d", i, n, len(s), cap(s), n)
				}
				for j, v := range s {
					if v != 0 {
						t.Fatalf("take %d: entry %d is %d, want 0: handed out twice", i, j, v)
					}
				}
				array := unsafe.SliceData(h.array)
				if started := array != prevArray; started != c.newArray[i] {
					t.Fatalf("take %d of %d (arrayLen %d): new array %v, want %v", i, n, c.arrayLen, started, c.newArray[i])
				}
				prevArray = array
				for j := range s {
					s[j] = uint64(i + 1)
				}
				got = append(got, s)
			}
			for i, s := range got {
				for j, v := range s {
					if v != uint64(i+1) {
						t.Fatalf("take %d: entry %d is %d, want %d: two takes share it", i, j, v, i+1)
					}
				}
			}
			moved := append(got[0], 99)
			if unsafe.SliceData(moved) == unsafe.SliceData(got[0]) {
				t.Fatalf("an append to a taken slice stayed in the shared array")
			}
			if len(got) > 1 && got[1][0] != 2 {
				t.Fatalf("an append to take 0 wrote %d over take 1's first entry", got[1][0])
			}
		})
	}
}

// TestHeadArraysTakeOutOfRange: a take of no entry or of more than an
// array is a bug.
func TestHeadArraysTakeOutOfRange(t *testing.T) {
	for _, n := range []int{0, -1, 5} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("take(%d) of 4-entry arrays did not panic", n)
				}
			}()
			h := headArrays[int]{arrayLen: 4}
			h.take(n)
		}()
	}
}

// TestFirstHeadsShareArrays: accounts whose first ledger entries, fills
// and positions tables sit side by side in the shared arrays grow without
// touching each other, and read back what they hold.
func TestFirstHeadsShareArrays(t *testing.T) {
	accts := make([]account, 3)
	markets := make([]uuid.UUID, 8)
	for i := range markets {
		markets[i] = uuid.New()
	}
	for i := range accts {
		a := &accts[i]
		a.appendLedger(&LedgerEntry{Seq: uint64(i + 1), Currency: money.KP, Type: TxSignupBonus, Amount: 1})
		a.fills.pushHead(&fillHeads, makeFill(&TradeSummary{ID: uuid.New(), Market: markets[0], Shares: money.Amount(i + 1)}))
		a.putPosition(&Position{Market: markets[0], Currency: money.KP, Shares: [NumSides]money.Amount{money.Amount(i + 1), 0}})
	}
	// The middle one grows past its first entries and table, the others
	// do not.
	for j := range 300 {
		a := &accts[1]
		a.appendLedger(&LedgerEntry{Seq: uint64(100 + j), Currency: money.KP, Type: TxTradeBuy, Amount: -1})
		a.fills.pushHead(&fillHeads, makeFill(&TradeSummary{ID: uuid.New(), Market: markets[0], Shares: money.Amount(100 + j)}))
	}
	for _, m := range markets[1:] {
		accts[1].putPosition(&Position{Market: m, Currency: money.KP, Shares: [NumSides]money.Amount{7, 0}})
	}
	for i, want := range []int{1, 301, 1} {
		a := &accts[i]
		led, fills := a.ledger[money.KP].snapshot(), a.fills.snapshot()
		if led.Len() != want || fills.Len() != want {
			t.Fatalf("account %d: %d entries and %d fills, want %d", i, led.Len(), fills.Len(), want)
		}
		if got := led.at(0).Seq; got != uint64(i+1) {
			t.Fatalf("account %d: first entry's Seq %d, want %d (a neighbour's growth wrote over it)", i, got, i+1)
		}
		if got := fills.at(0).value().Shares; got != money.Amount(i+1) {
			t.Fatalf("account %d: first fill's shares %d, want %d (a neighbour's growth wrote over it)", i, got, i+1)
		}
		p, ok := a.position(markets[0], money.KP)
		if !ok || p.Shares[Yes] != money.Amount(i+1) {
			t.Fatalf("account %d: first position %+v (held %v), want %d yes shares", i, p, ok, i+1)
		}
		if err := a.positions.check(); err != nil {
			t.Fatalf("account %d: %v", i, err)
		}
	}
	if n := accts[1].positionCount(); n != len(markets) {
		t.Fatalf("%d positions, want %d", n, len(markets))
	}
	led, fills := accts[1].ledger[money.KP].snapshot(), accts[1].fills.snapshot()
	for j := 1; j < 301; j++ {
		if got := led.at(j).Seq; got != uint64(100+j-1) {
			t.Fatalf("entry %d: Seq %d, want %d", j, got, 100+j-1)
		}
		if got := fills.at(j).value().Shares; got != money.Amount(100+j-1) {
			t.Fatalf("fill %d: shares %d, want %d", j, got, 100+j-1)
		}
	}
	if v := accts[1].volumeKP; v != 300 {
		t.Fatalf("volume %d, want 300: the aggregates follow every entry", v)
	}
}

// TestChunkListPushHead: lists that take their first two entries from one
// shared array, pushed in turn, each read back their own entries in
// order; every view taken along the way still reads what it read; and a
// list's head is the shared slot of capacity 1, then of capacity 2, and
// from the third entry a slice of its own.
func TestChunkListPushHead(t *testing.T) {
	cases := []struct {
		name    string
		entries int
	}{
		{"one entry", 1},
		{"two entries", 2},
		{"three entries", 3},
		{"past the head", listChunkLen + 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			heads := headArrays[int]{arrayLen: 8}
			lists := make([]chunkList[int], 3)
			type view struct {
				list int
				v    listView[int]
			}
			var views []view
			for j := range c.entries {
				for i := range lists {
					lists[i].pushHead(&heads, i*100_000+j)
					views = append(views, view{i, lists[i].snapshot()})
					switch got := cap(lists[i].last); {
					case j == 0 && got != 1, j == 1 && got != 2:
						t.Fatalf("list %d after %d entries: head's capacity %d, want %d", i, j+1, got, j+1)
					case j == 2 && got <= 2:
						t.Fatalf("list %d after 3 entries: head's capacity %d: still in the shared array", i, got)
					}
				}
			}
			for _, w := range views {
				for k := range w.v.Len() {
					if got, want := *w.v.at(k), w.list*100_000+k; got != want {
						t.Fatalf("list %d, a view of %d entries: entry %d is %d, want %d", w.list, w.v.Len(), k, got, want)
					}
				}
			}
			for i := range lists {
				if got := lists[i].Len(); got != c.entries {
					t.Fatalf("list %d: %d entries, want %d", i, got, c.entries)
				}
			}
		})
	}
}
