package core

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"marketd/core/money"
)

// Chunk bounds of Capture. A chunk is encoded as one record, whose size and
// list lengths the log's codec bounds (64 MiB, 1<<20 items): chunks are
// closed well before either, by an estimate of their encoded size.
const (
	// ChunkTargetBytes is the estimated encoded size past which a chunk is
	// handed to the visitor: a target reached by estimate, not a limit (the
	// hard limit of a chunk's frame is snapshot.MaxChunkBytes). A periodic
	// snapshot yields the processor between chunks, and a chunk's buffers
	// are reused for the next: at 8 MiB, a state of 128 accounts holding
	// 4,000 fills each made 11 chunks of 4.4 MB, up to 205-277 ms apart (the
	// writes included), and took twice the CPU of 512 KiB chunks, whose
	// buffers stay in the caches (docs/PERFORMANCE.md, "The snapshot's
	// second").
	ChunkTargetBytes = 512 << 10
	// ledgerPieceEntries bounds the items of each unbounded list (ledger,
	// positions, trades, vig payments, transfers, votes) in one image
	// change, and a tenth of it the idempotency entries, which are up to
	// about 430 bytes each (a 255-byte key): a longer list continues in
	// further changes of the same object.
	ledgerPieceEntries = 100_000
)

// Estimated encoded sizes, generous, for chunking only.
const (
	estAccountBytes  = 128
	estLedgerBytes   = 64
	estPositionBytes = 160
	estTradeBytes    = 96
	estKeyBytes      = 192
	estSessionBytes  = 96
	estMarketBytes   = 512
	estNoteBytes     = 64
	estVigBytes      = 64
	estTransferBytes = 64 // and its tx hash and wallet
	estProposalBytes = 128
	estVoteBytes     = 64
	estIdemBytes     = 64 // and its key and answer
)

// Capture walks the whole state while the engine keeps trading and hands it
// to visit as image records (Kind KindImage) of at most chunk objects, and
// about ChunkTargetBytes, each; visit must not retain a record or anything in
// it after it returns: the next chunk reuses the memory. An account whose
// ledger is longer than fits one change continues in changes with no Info
// (LoadImage appends them). Each object is copied under its own lock, so
// trading waits at most for the copy of one account.
//
// The images are not one consistent cut: each object is taken at its own
// LSN. It is made consistent by replay: a snapshot taken this way must be
// loaded and then replayed from a sequence number at or below every record
// that was not yet handed to the journal when Capture began (the journal's
// durable position then is such a number), up to at least the returned
// maxLSN, the highest LSN of any captured object.
func (s *State) Capture(chunk int, visit func(*Record) error) (maxLSN uint64, err error) {
	return s.capture(chunk, ledgerPieceEntries, visit)
}

// capture is Capture with the ledger piece size as a parameter, for tests.
func (s *State) capture(chunk, piece int, visit func(*Record) error) (maxLSN uint64, err error) {
	s.publishDirty()
	c := capturer{chunk: max(chunk, 1), piece: max(piece, 1), visit: visit, rec: Record{Kind: KindImage}}
	s.supply.mu.Lock()
	c.rec.Supply = &SupplyChange{Prev: s.supply.lsn, Minted: s.supply.minted, Burned: s.supply.burned}
	s.supply.mu.Unlock()
	c.see(c.rec.Supply.Prev)

	s.rangeMarkets(func(m *market) bool {
		// Every change handed to the journal before Capture began must
		// be in the image: a trade's view is made on demand
		// (view_publish.go).
		v := m.freshView()
		c.see(v.LSN)
		c.market(v.image())
		return c.err == nil
	})
	if c.err == nil {
		c.flush()
	}
	if c.err == nil {
		s.captureAuth(&c)
	}
	if c.err == nil {
		// In memory order, not the account map's: a cache miss per
		// account was a third of a capture's CPU.
		s.accountMem.each(func(a *account) bool {
			a.mu.Lock()
			if !a.stored() {
				a.mu.Unlock()
				return true
			}
			ch, pre := a.imageLocked(&c.bufs)
			a.mu.Unlock()
			c.see(ch.Prev)
			c.bufs.addTrades(&ch, &pre)
			c.account(ch, pre.ledger)
			return c.err == nil
		})
	}
	if c.err == nil {
		c.flush()
	}
	if c.err != nil {
		return 0, c.err
	}
	return c.maxLSN, nil
}

// capturer gathers one chunk of images at a time for Capture.
type capturer struct {
	chunk  int
	piece  int // ledger entries per change
	visit  func(*Record) error
	rec    Record
	bytes  int // estimated encoded size of rec
	bufs   imageBuffers
	maxLSN uint64
	err    error
}

func (c *capturer) see(lsn uint64) { c.maxLSN = max(c.maxLSN, lsn) }

// next flushes the chunk once it holds n objects or its bytes; it reports
// whether the walk goes on.
func (c *capturer) next(n int) bool {
	if n >= c.chunk || c.bytes >= ChunkTargetBytes {
		c.flush()
	}
	return c.err == nil
}

// flush hands the chunk to the visitor, if it holds anything, and starts
// the next one in the same memory.
func (c *capturer) flush() {
	r := &c.rec
	if len(r.Accounts)+len(r.Markets)+len(r.Keys)+len(r.Sessions) > 0 || r.Supply != nil {
		c.err = c.visit(r)
	}
	*r = Record{Kind: KindImage, Accounts: r.Accounts[:0], Markets: r.Markets[:0], Keys: r.Keys[:0], Sessions: r.Sessions[:0]}
	c.bytes = 0
	c.bufs.reset()
}

// account adds an account image. Lists that grow without bound (the
// ledger, positions, trades, idempotency entries, vig payments, transfers)
// are cut into pieces of at most c.piece items (idempotency entries a
// tenth of that): the first change holds the first piece of each, and
// continuation changes (no Info, same Prev) the rest, which LoadImage
// appends. A record then stays within the codec's limits whatever the size
// of one account's lists (an account of a million transfers, say). Pieces
// that outlive this call in the chunk are in memory that is not reused:
// the ledger is joined into a slice of its own when it is long, positions,
// trades and idempotency entries are copied out of the reused buffer, and
// vig payments and transfers are prefixes of append-only slices.
func (c *capturer) account(ch AccountChange, ledger [money.NumCurrencies]listView[ledgerSlot]) {
	sortPositions(ch.Positions)
	n := ledgerEntries(&ledger)
	var rest imageRest
	if n <= c.piece {
		c.bufs.addLedger(&ch, ledger)
	} else {
		all := make([]LedgerEntry, 0, n)
		for cur := range money.NumCurrencies {
			all = appendValues(all, &ledger[cur], 0, ledger[cur].Len()) // immutable: no lock needed
		}
		ch.Ledger, rest.ledger = all[:c.piece], all[c.piece:]
	}
	if len(ch.Positions) > c.piece {
		ps := slices.Clone(ch.Positions)
		ch.Positions, rest.positions = ps[:c.piece], ps[c.piece:]
	}
	if len(ch.Trades) > c.piece {
		// Oldest first, so that loading the pieces in order rebuilds the
		// fills and leaves the recent trades last (applyLocked).
		ts := slices.Clone(ch.Trades)
		ch.Trades, rest.trades = ts[:c.piece], ts[c.piece:]
	}
	idemPiece := max(c.piece/10, 1)
	if len(ch.Idem) > idemPiece {
		ies := slices.Clone(ch.Idem)
		ch.Idem, rest.idem = ies[:idemPiece], ies[idemPiece:]
	}
	if len(ch.Vig) > c.piece {
		ch.Vig, rest.vig = ch.Vig[:c.piece], ch.Vig[c.piece:]
	}
	if len(ch.Transfers) > c.piece {
		ch.Transfers, rest.transfers = ch.Transfers[:c.piece], ch.Transfers[c.piece:]
	}
	c.addAccount(&ch)
	for !rest.empty() && c.err == nil {
		// The rest continues the same account: no info, same LSN.
		cont := AccountChange{ID: ch.ID, Prev: ch.Prev}
		cont.Ledger, rest.ledger = cut(rest.ledger, c.piece)
		cont.Positions, rest.positions = cut(rest.positions, c.piece)
		cont.Trades, rest.trades = cut(rest.trades, c.piece)
		cont.Idem, rest.idem = cut(rest.idem, idemPiece)
		cont.Vig, rest.vig = cut(rest.vig, c.piece)
		cont.Transfers, rest.transfers = cut(rest.transfers, c.piece)
		c.addAccount(&cont)
	}
}

// imageRest is what an account image's first change left for its
// continuations.
type imageRest struct {
	ledger    []LedgerEntry
	positions []Position
	trades    []TradeSummary
	idem      []IdemEntry
	vig       []VigPayment
	transfers []Transfer
}

func (r *imageRest) empty() bool {
	return len(r.ledger)+len(r.positions)+len(r.trades)+len(r.idem)+len(r.vig)+len(r.transfers) == 0
}

// cut splits at most n items off the front of s; nil when s is empty.
func cut[T any](s []T, n int) (head, tail []T) {
	if len(s) == 0 {
		return nil, nil
	}
	k := min(n, len(s))
	return s[:k:k], s[k:]
}

// addAccount adds one account change to the chunk.
func (c *capturer) addAccount(ch *AccountChange) {
	c.rec.Accounts = append(c.rec.Accounts, *ch)
	c.bytes += estAccountImageBytes(ch) + len(ch.Ledger)*estLedgerBytes
	c.next(len(c.rec.Accounts))
}

// market adds a market image, its votes cut into pieces of at most c.piece
// as an account's lists are: continuation changes (no Info, same Prev)
// carry the rest. The votes are a prefix of an append-only slice, shared
// with the view, so the pieces need no copy.
func (c *capturer) market(ch MarketChange) {
	var rest []Vote
	if len(ch.Votes) > c.piece {
		ch.Votes, rest = ch.Votes[:c.piece], ch.Votes[c.piece:]
	}
	c.addMarket(&ch)
	for len(rest) > 0 && c.err == nil {
		cont := MarketChange{ID: ch.ID, Prev: ch.Prev}
		cont.Votes, rest = cut(rest, c.piece)
		c.addMarket(&cont)
	}
}

// addMarket adds one market change to the chunk.
func (c *capturer) addMarket(ch *MarketChange) {
	c.rec.Markets = append(c.rec.Markets, *ch)
	c.bytes += estMarketImageBytes(ch)
	c.next(len(c.rec.Markets))
}

// estMarketImageBytes estimates the encoded size of a market's image.
func estMarketImageBytes(ch *MarketChange) int {
	n := estMarketBytes + len(ch.Proposals)*estProposalBytes + len(ch.Votes)*estVoteBytes
	if in := ch.Info; in != nil {
		n += len(in.Title) + len(in.Description) + len(in.Category)
	}
	return n
}

// estAccountImageBytes estimates the encoded size of an account's image
// without its ledger, which the caller counts as it splits it.
func estAccountImageBytes(ch *AccountChange) int {
	n := estAccountBytes + len(ch.Positions)*estPositionBytes +
		len(ch.Notes)*estNoteBytes + len(ch.Vig)*estVigBytes
	for _, t := range ch.Trades {
		n += estTradeBytes + len(t.Reasoning)
	}
	for _, t := range ch.Transfers {
		n += estTransferBytes + len(t.TxHash) + len(t.Wallet) + len(t.ChainTx)
	}
	for _, ie := range ch.Idem {
		n += estIdemBytes + len(ie.Key) + len(ie.Answer)
	}
	if in := ch.Info; in != nil {
		n += len(in.Name) + len(in.PasswordHash) + len(in.ReferralCode) + len(in.Wallet) +
			len(in.Persona) + len(in.TOSVersion)
	}
	return n
}

// captureAuth adds the keys and sessions, copied under the table's shared
// lock and chunked like the rest. A key is taken as its record at its LSN
// left it: usage not flushed yet stays out, as it is out of the log, so an
// image at an LSN is always that record's after-image.
func (s *State) captureAuth(c *capturer) {
	s.auth.mu.RLock()
	keys := make([]KeyChange, 0, len(s.auth.keys))
	for _, ent := range s.auth.keys {
		keys = append(keys, KeyChange{Prev: ent.lsn, Key: ent.key})
	}
	sessions := make([]SessionChange, 0, len(s.auth.sessions))
	for _, ent := range s.auth.sessions {
		sessions = append(sessions, SessionChange{Prev: ent.lsn, Session: ent.session})
	}
	s.auth.mu.RUnlock()
	for _, k := range keys {
		c.see(k.Prev)
		c.rec.Keys = append(c.rec.Keys, k)
		c.bytes += estKeyBytes + len(k.Key.Name)
		if !c.next(len(c.rec.Keys) + len(c.rec.Sessions)) {
			return
		}
	}
	for _, ss := range sessions {
		c.see(ss.Prev)
		c.rec.Sessions = append(c.rec.Sessions, ss)
		c.bytes += estSessionBytes
		if !c.next(len(c.rec.Keys) + len(c.rec.Sessions)) {
			return
		}
	}
	c.flush()
}

// Canonical returns the whole state as one image record in a fixed order
// (objects sorted by ID, positions by market and currency), so that two
// states can be compared for equality: after a recovery, against the state
// at the boundary it recovered to. It reads a quiescent state. Key usage is
// taken as logged: usage not flushed yet is not part of it.
func (s *State) Canonical() *Record {
	rec := &Record{Kind: KindImage}
	_, err := s.Capture(math.MaxInt, func(r *Record) error {
		r = r.Clone() // the next chunk reuses r's memory
		rec.Accounts = append(rec.Accounts, r.Accounts...)
		rec.Markets = append(rec.Markets, r.Markets...)
		rec.Keys = append(rec.Keys, r.Keys...)
		rec.Sessions = append(rec.Sessions, r.Sessions...)
		if r.Supply != nil {
			sc := *r.Supply
			rec.Supply = &sc
		}
		return nil
	})
	if err != nil {
		panic(fmt.Sprintf("BUG: canonical capture: %v", err))
	}
	rec.Accounts = joinContinuations(rec.Accounts)
	rec.Markets = joinMarketContinuations(rec.Markets)
	for i := range rec.Accounts {
		// An account's idempotency entries come from a map.
		slices.SortFunc(rec.Accounts[i].Idem, func(a, b IdemEntry) int {
			if c := strings.Compare(a.Key, b.Key); c != 0 {
				return c
			}
			return cmp.Compare(a.Index, b.Index)
		})
	}
	slices.SortFunc(rec.Accounts, func(a, b AccountChange) int { return compareIDs(a.ID, b.ID) })
	slices.SortFunc(rec.Markets, func(a, b MarketChange) int { return compareIDs(a.ID, b.ID) })
	slices.SortFunc(rec.Keys, func(a, b KeyChange) int { return compareIDs(a.Key.ID, b.Key.ID) })
	slices.SortFunc(rec.Sessions, func(a, b SessionChange) int { return bytes.Compare(a.Session.Hash[:], b.Session.Hash[:]) })
	return rec
}

// joinContinuations folds each account's continuation changes (no Info,
// the rest of its long lists) into the change before them.
func joinContinuations(in []AccountChange) []AccountChange {
	out := in[:0]
	for _, ch := range in {
		if n := len(out); ch.Info == nil && n > 0 && out[n-1].ID == ch.ID {
			o := &out[n-1]
			o.Ledger = append(o.Ledger, ch.Ledger...)
			o.Positions = append(o.Positions, ch.Positions...)
			o.Trades = append(o.Trades, ch.Trades...)
			o.Idem = append(o.Idem, ch.Idem...)
			o.Vig = append(o.Vig, ch.Vig...)
			o.Transfers = append(o.Transfers, ch.Transfers...)
			continue
		}
		out = append(out, ch)
	}
	return out
}

// joinMarketContinuations folds each market's continuation changes (no
// Info, the rest of its votes) into the change before them.
func joinMarketContinuations(in []MarketChange) []MarketChange {
	out := in[:0]
	for _, ch := range in {
		if n := len(out); ch.Info == nil && n > 0 && out[n-1].ID == ch.ID {
			out[n-1].Votes = append(out[n-1].Votes, ch.Votes...)
			continue
		}
		out = append(out, ch)
	}
	return out
}
