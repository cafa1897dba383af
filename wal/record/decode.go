package record

import (
	"fmt"
	"math"

	"marketd/core"
	"marketd/core/money"
)

// Decode decodes one record encoded by Append; b must hold
// exactly that encoding. It rejects, with an error wrapping ErrCorrupt that
// names the byte offset: truncated input, trailing bytes, unknown enum
// values (Kind, Currency, Side, Status, Role, TxType, Tier, scope bits),
// presence or boolean bytes other than 0 and 1, non-minimal varints, lists,
// strings or records over the limits, and list counts larger than the bytes
// left could hold. Empty lists and byte slices decode as nil.
//
// The record shares no memory with b; the caller may keep it.
func Decode(b []byte) (*core.Record, error) {
	return decodeInto(new(Block), FormatVersion, b, nil, nil)
}

// DecodeVersion is Decode for a payload of the given format version (a
// frame's Version): fields added after that version are left zero.
func DecodeVersion(version byte, b []byte) (*core.Record, error) {
	if version < MinFormatVersion || version > FormatVersion {
		return nil, fmt.Errorf("record: decode record: unknown version %d: %w", version, ErrCorrupt)
	}
	return decodeInto(new(Block), version, b, nil, nil)
}

// CountAccounts returns how many account changes a payload of the given
// format version declares, reading only its head (kind, time, the count):
// a snapshot's loader sums it over the chunks to size the state's maps
// before it decodes them. It fails as DecodeVersion would on a bad head;
// the rest of b is not checked.
func CountAccounts(version byte, b []byte) (int, error) {
	if version < MinFormatVersion || version > FormatVersion {
		return 0, fmt.Errorf("record: count accounts: unknown version %d: %w", version, ErrCorrupt)
	}
	d := decoder{b: b, version: version}
	if kind := core.Kind(d.byte()); d.err == nil && !validKind(kind) {
		d.fail(fmt.Sprintf("unknown kind %d", kind), 1)
	}
	d.varint()
	minAccount := minAccountChangeBytes
	if version < 3 {
		minAccount = minAccountChangeBytesV2
	}
	n := d.count(minAccount, "accounts")
	return n, d.error()
}

// decodeInto decodes into blk, which must be zero: replay hands in
// blocks allocated a chunk at a time, one allocation for hundreds of
// records instead of one each.
// strs, when not nil, holds the record's strings; ar, when not nil, the
// account changes of a record of several (DecodeArena).
func decodeInto(blk *Block, version byte, b []byte, strs *Strings, ar *Arena) (*core.Record, error) {
	if len(b) > MaxBytes {
		return nil, fmt.Errorf("record: decode record: %d bytes, limit %d: %w", len(b), MaxBytes, ErrCorrupt)
	}
	d := decoder{b: b, version: version, spareAccount: &blk.account, spareBook: &blk.book, strs: strs}
	rec := &blk.rec
	rec.Kind = core.Kind(d.byte())
	if d.err == nil && !validKind(rec.Kind) {
		d.fail(fmt.Sprintf("unknown kind %d", rec.Kind), 1)
	}
	rec.Time = d.varint()

	minAccount := minAccountChangeBytes
	if version < 3 {
		minAccount = minAccountChangeBytesV2
	}
	n := d.smallCount(minAccount)
	if n < 0 {
		n = d.count(minAccount, "accounts")
	}
	if n > 0 {
		rec.Accounts = blk.acc[:]
		if n > 1 {
			rec.Accounts = d.accountChanges(n, ar)
		}
		for i := range rec.Accounts {
			d.accountChange(&rec.Accounts[i])
		}
	}
	n = d.smallCount(minMarketChangeBytes)
	if n < 0 {
		n = d.count(minMarketChangeBytes, "markets")
	}
	if n > 0 {
		rec.Markets = blk.mkt[:]
		if n > 1 {
			rec.Markets = make([]core.MarketChange, n)
		}
		for i := range rec.Markets {
			d.marketChange(&rec.Markets[i])
		}
	}
	// No supply change, keys or sessions: a trade's record, whose three
	// zero bytes Append writes at once.
	if len(d.b)-d.off != 3 || !d.zeros(3) {
		d.supplyKeysSessions(rec)
	}
	return d.done(rec)
}

// supplyKeysSessions decodes a record's supply change, keys and sessions.
func (d *decoder) supplyKeysSessions(rec *core.Record) {
	if d.flag("supply") {
		s := &core.SupplyChange{}
		s.Prev = d.uvarint()
		for c := range money.NumCurrencies {
			s.Minted[c] = d.amount()
		}
		for c := range money.NumCurrencies {
			s.Burned[c] = d.amount()
		}
		rec.Supply = s
	}
	// Format 3 appended Purged to key and session changes.
	v2 := 0
	if d.version < 3 {
		v2 = 1
	}
	if n := d.count(minKeyChangeBytes-v2, "keys"); n > 0 {
		rec.Keys = make([]core.KeyChange, n)
		for i := range rec.Keys {
			rec.Keys[i].Prev = d.uvarint()
			d.key(&rec.Keys[i].Key)
			if v2 == 0 {
				rec.Keys[i].Purged = d.flag("key purged")
			}
		}
	}
	if n := d.count(minSessionChangeBytes-v2, "sessions"); n > 0 {
		rec.Sessions = make([]core.SessionChange, n)
		for i := range rec.Sessions {
			rec.Sessions[i].Prev = d.uvarint()
			d.session(&rec.Sessions[i].Session)
			if v2 == 0 {
				rec.Sessions[i].Purged = d.flag("session purged")
			}
		}
	}
}

// done returns rec, or the first error, or an error for bytes left over.
func (d *decoder) done(rec *core.Record) (*core.Record, error) {
	if d.err == nil && d.off != len(d.b) {
		d.fail(fmt.Sprintf("%d trailing bytes", len(d.b)-d.off), 0)
	}
	if d.err != nil {
		return nil, d.error()
	}
	return rec, nil
}

func (d *decoder) accountChange(a *core.AccountChange) {
	var blk *accountBlock // taken on first use by d.block
	a.ID = d.uuid()
	a.Prev = d.uvarint()
	if d.flag("account info") {
		a.Info = d.accountInfo()
	}
	n := d.smallCount(minBalanceBytes)
	if n < 0 {
		n = d.count(minBalanceBytes, "balances")
	}
	if n > 0 {
		a.Balances = d.block(&blk).bal[:]
		if n > 1 {
			a.Balances = make([]core.Balance, n)
		}
		for i := range a.Balances {
			a.Balances[i].Currency = d.currency()
			a.Balances[i].After = d.amount()
		}
	}
	n = d.smallCount(minLedgerEntryBytes)
	if n < 0 {
		n = d.count(minLedgerEntryBytes, "ledger entries")
	}
	if n > 0 {
		a.Ledger = d.block(&blk).led[:]
		if n > 1 {
			a.Ledger = make([]core.LedgerEntry, n)
		}
		for i := range a.Ledger {
			d.ledgerEntry(&a.Ledger[i])
		}
	}
	n = d.smallCount(minPositionBytes)
	if n < 0 {
		n = d.count(minPositionBytes, "positions")
	}
	if n > 0 {
		a.Positions = d.block(&blk).pos[:]
		if n > 1 {
			a.Positions = make([]core.Position, n)
		}
		for i := range a.Positions {
			d.position(&a.Positions[i])
		}
	}
	n = d.smallCount(minTradeSummaryBytes)
	if n < 0 {
		n = d.count(minTradeSummaryBytes, "trades")
	}
	if n > 0 {
		a.Trades = d.block(&blk).tr[:]
		if n > 1 {
			a.Trades = make([]core.TradeSummary, n)
		}
		for i := range a.Trades {
			d.tradeSummary(&a.Trades[i])
		}
	}
	d.accountExtras(a, &blk)
}

func (d *decoder) accountInfo() *core.AccountInfo {
	var in *core.AccountInfo
	if len(d.infos) > 0 {
		in, d.infos = &d.infos[0], d.infos[1:]
	} else {
		in = &core.AccountInfo{}
	}
	in.Name = d.string("account name")
	in.Role = core.Role(d.byte())
	if d.err == nil && !validRole(in.Role) {
		d.fail(fmt.Sprintf("unknown role %d", in.Role), 1)
	}
	in.PasswordHash = d.bytes("password hash")
	in.CreatedAt = d.varint()
	in.Referrer = d.uuid()
	d.profile(in)
	return in
}

func (d *decoder) ledgerEntry(e *core.LedgerEntry) {
	e.Seq = d.uvarint()
	idx := d.uvarint()
	if d.err == nil && idx > math.MaxUint32 {
		d.fail(fmt.Sprintf("ledger index %d over %d", idx, uint64(math.MaxUint32)), 0)
	}
	e.Index = uint32(idx)
	e.Currency = d.currency()
	e.Type = core.TxType(d.byte())
	if d.err == nil && !e.Type.Valid() {
		d.fail(fmt.Sprintf("unknown ledger type %d", e.Type), 1)
	}
	e.Amount = d.amount()
	e.BalanceAfter = d.amount()
	e.Ref = d.uuid()
	e.Time = d.varint()
}

func (d *decoder) position(p *core.Position) {
	p.Market = d.uuid()
	p.Currency = d.currency()
	p.Closed = d.flag("position closed")
	for s := range core.NumSides {
		p.Shares[s] = d.amount()
	}
	for s := range core.NumSides {
		p.Cost[s] = d.amount()
	}
	p.PaidIn = d.amount()
	p.PaidOut = d.amount()
	p.Referrer = d.uuid()
	p.RefVig = d.amount()
}

func (d *decoder) tradeSummary(t *core.TradeSummary) {
	t.ID = d.uuid()
	t.Market = d.uuid()
	t.Currency = d.currency()
	t.Side = d.side()
	t.Sell = d.flag("trade sell")
	t.Shares = d.amount()
	t.Cost = d.amount()
	t.Vig = d.amount()
	t.Reasoning = d.string("trade reasoning")
	t.Time = d.varint()
}

func (d *decoder) marketChange(m *core.MarketChange) {
	m.ID = d.uuid()
	m.Prev = d.uvarint()
	if d.flag("market info") {
		in := &core.MarketInfo{}
		in.Title = d.string("market title")
		in.Description = d.string("market description")
		in.Category = d.string("market category")
		in.Creator = d.uuid()
		in.Alpha = math.Float64frombits(d.uint64LE())
		in.Q0 = d.amount()
		in.ClosesAt = d.varint()
		in.CreatedAt = d.varint()
		in.Status = core.Status(d.byte())
		if d.err == nil && !validStatus(in.Status) {
			d.fail(fmt.Sprintf("unknown status %d", in.Status), 1)
		}
		in.Outcome = d.side()
		in.ResolvedAt = d.varint()
		if d.version >= 3 {
			d.step(&in.Step)
		}
		m.Info = in
	}
	minBook := minBookBytes
	if d.version < 3 {
		minBook = minBookBytesV2
	}
	n := d.smallCount(minBook)
	if n < 0 {
		n = d.count(minBook, "books")
	}
	if n > 0 {
		if n == 1 && d.spareBook != nil {
			m.Books = d.spareBook[:]
			d.spareBook = nil
		} else {
			m.Books = make([]core.Book, n)
		}
		for i := range m.Books {
			b := &m.Books[i]
			b.Currency = d.currency()
			for s := range core.NumSides {
				b.Q[s] = d.amount()
			}
			b.Subsidy = d.amount()
			b.Collateral = d.amount()
			b.Volume = d.amount()
			b.Splits = d.amount()
			b.VigTotal = d.amount()
			b.VigCreator = d.amount()
			b.VigHouse = d.amount()
			b.Trades = d.uvarint()
			// Format 3. Before it only trades moved q.
			b.Seq = b.Trades
			if d.version >= 3 {
				b.Seq = d.uvarint()
			}
		}
	}
	d.marketExtras(m)
}

func (d *decoder) key(k *core.Key) {
	k.ID = d.uuid()
	k.Account = d.uuid()
	k.Name = d.string("key name")
	k.Hash = d.hash()
	k.Prefix = d.string("key prefix")
	k.Scopes = core.Scopes(d.byte())
	if d.err == nil && !validScopes(k.Scopes) {
		d.fail(fmt.Sprintf("unknown scopes %#x", k.Scopes), 1)
	}
	k.Tier = core.Tier(d.byte())
	if d.err == nil && !validTier(k.Tier) {
		d.fail(fmt.Sprintf("unknown tier %d", k.Tier), 1)
	}
	k.CreatedAt = d.varint()
	k.ExpiresAt = d.varint()
	k.RevokedAt = d.varint()
	k.TotalRequests = d.uvarint()
	k.LastUsedAt = d.varint()
}

func (d *decoder) session(s *core.Session) {
	s.Hash = d.hash()
	s.Account = d.uuid()
	s.CreatedAt = d.varint()
	s.ExpiresAt = d.varint()
	s.RevokedAt = d.varint()
}

// Allocation blocks. A trade, the most common record, has one account
// change with one balance, ledger entry, position and trade, and one market
// change with one book. Allocating the single items of these lists together
// with the record takes a trade from nine allocations to two (the other is
// the trade's reasoning), which is most of the decoding time saved; replay
// speed is what bounds recovery time. A list of more than one item gets an
// allocation of its own; the account changes after the first (a snapshot's
// chunk has thousands) share one array of account blocks (written).
// The cost: a record without accounts or markets allocates about 400 bytes
// it does not use, and a caller keeping one of the slices keeps the whole
// block (944 bytes, 352 of them the account block), or the record's array
// of account blocks, alive. A keyed request's entry (core.IdemEntry) rides
// in the account block too.
type (
	// Block is the memory one decoded record lives in (see above). The
	// zero Block is ready; DecodeFramed fills it, and a Block is used for
	// one record only.
	Block struct {
		rec     core.Record
		acc     [1]core.AccountChange
		mkt     [1]core.MarketChange
		account accountBlock
		book    [1]core.Book
	}
	accountBlock struct {
		bal [1]core.Balance
		led [1]core.LedgerEntry
		pos [1]core.Position
		tr  [1]core.TradeSummary
		// idem: a keyed request's one entry.
		idem [1]core.IdemEntry
	}
)

// block returns *blk, first setting it to the record's spare account block
// if still unused, else to the next of the record's blocks: an account
// change takes at most one, and a record of n account changes has the spare
// and n-1 others.
func (d *decoder) block(blk **accountBlock) *accountBlock {
	if *blk == nil {
		switch {
		case d.spareAccount != nil:
			*blk, d.spareAccount = d.spareAccount, nil
		case len(d.blocks) > 0:
			*blk, d.blocks = &d.blocks[0], d.blocks[1:]
		default:
			*blk = new(accountBlock)
		}
	}
	return *blk
}

// accountChanges returns room for the n > 1 account changes of a record,
// and readies blocks for the changes after the first (which takes the
// spare): in ar's memory when ar is not nil, with an AccountInfo for each
// change, else in new arrays.
func (d *decoder) accountChanges(n int, ar *Arena) []core.AccountChange {
	if ar == nil {
		d.blocks = written[accountBlock](nil, n-1)
		return make([]core.AccountChange, n)
	}
	ar.accounts = written(ar.accounts, n)
	ar.blocks = written(ar.blocks, n-1)
	ar.infos = written(ar.infos, n)
	d.blocks, d.infos = ar.blocks, ar.infos
	return ar.accounts
}

// written returns s resliced to n zero items, or, when s has no room for
// them, n zero items in a new array that has been written once. A
// snapshot's chunk of 4,096 accounts took a block each, a new object from
// memory the runtime had just taken from the kernel and never written: the
// first access to a block was a read (the nil check the compiler puts
// before block(...).bal[:]), which mapped the kernel's zero page, and the
// first write then faulted again to copy it, flushing the TLB of both
// processors, an inter-processor interrupt (perf: do_wp_page,
// flush_tlb_mm_range, smp_call_function_many_cond under ledgerEntry). An
// array written first faults each page in once, without a flush.
func written[T any](s []T, n int) []T {
	if cap(s) < n {
		s = make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}
