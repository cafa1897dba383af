package core

import "marketd/core/money"

// accountRefs is the part of an account that holds pointers, kept apart
// from it in the arena's array (arena.go), so that the collector's mark
// reads these 192 bytes of each account and not the account: every field
// with a pointer is here, and the account has none
// (TestAccountHasNoPointers). Like the account's, its fields are guarded
// by the account's mu. A trade's come first, in two whole cache lines:
// the positions and the fills in the first, the ledgers (32 bytes each) in
// the second (TestAccountHotFieldsInFirstLines).
type accountRefs struct {
	// positions are the account's positions, every currency's, by
	// market and currency (positions.go).
	positions positionTable
	// fills are every trade of the account, oldest first, append-only,
	// without their reasoning, for GET /api/trades (fills.go). Images
	// carry them (imageLocked).
	fills chunkList[fill]

	ledger [money.NumCurrencies]chunkList[ledgerSlot]

	text []byte // the info's strings (accountInfo)
	// extra holds what most accounts never have; nil until one of its
	// fields is set (editMore).
	extra *accountMore
	// Pads the companion to a whole number of cache lines.
	_ [32]byte
}

// accountMore is the part of an account's companion that most accounts
// never have: notifications, vig payments, transfers, idempotent answers,
// trades' reasoning. Behind one pointer, nil in most accounts, they are
// one word of the companion that the collector's mark reads, not five
// (docs/PERFORMANCE.md, "Accounts the collector does not scan"). Its
// fields are guarded by the account's mu.
type accountMore struct {
	// reasons are the reasoning of the last RecentTradesKept fills, fill
	// i's at reasons[i%RecentTradesKept]; nil while none of them had one.
	// The recent trades are the last fills with their reasoning
	// (recentTrades): a ring of whole trades kept beside the fills wrote
	// every trade twice, two cache lines more per trade.
	reasons *[RecentTradesKept]string
	// idem holds the stored answers of idempotent requests by key, each
	// key's entries in index order (idempotency.go); at most
	// Config.IdempotencyKeys live keys.
	idem map[string]idemKey
	// notes are the kept notifications, oldest first, at most MaxNotes.
	notes []Note
	// vig and transfers are append-only, like the ledger.
	vig       []VigPayment
	transfers []Transfer
}

// reasons, idem, notes, vig and transfers return the account's
// accountMore's fields, nil when it has none: what they return is the
// account's own (a map changed in place changes the account's), but a
// field is set through editMore. Caller holds a.mu.
func (a *account) reasons() *[RecentTradesKept]string { return a.moreOrZero().reasons }
func (a *account) idem() map[string]idemKey           { return a.moreOrZero().idem }
func (a *account) notes() []Note                      { return a.moreOrZero().notes }
func (a *account) vig() []VigPayment                  { return a.moreOrZero().vig }
func (a *account) transfers() []Transfer              { return a.moreOrZero().transfers }

// noMore is what an account without an accountMore reads: never written.
var noMore accountMore

// moreOrZero returns the account's accountMore, or noMore, to read.
func (a *account) moreOrZero() *accountMore {
	if m := a.refs().extra; m != nil {
		return m
	}
	return &noMore
}

// editMore returns the account's accountMore to change, made if it has
// none. Caller holds a.mu.
func (a *account) editMore() *accountMore {
	r := a.refs()
	if r.extra == nil {
		r.extra = new(accountMore)
	}
	return r.extra
}

// refs returns the account's companion, which holds its pointers. The
// account must come from a state's arena: no other has one.
func (a *account) refs() *accountRefs {
	if !a.placed {
		panic("BUG: core: an account outside a state's arena has no companion")
	}
	return companion[account, accountRefs](a, a.ref)
}
