package record

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
)

// Limits of the record encoding. The decoder rejects anything over them and
// the encoder treats a record over them as a bug, so that every record the
// log accepts can also be read back.
const (
	// MaxBytes is the largest encoded record: core's limit, which core
	// checks before it applies a record, so that the encoder's check is
	// an assertion. Core's writers bound what they put in one record (a
	// settlement walks its holders in steps of a few thousand).
	MaxBytes = core.MaxRecordBytes
	// MaxStringBytes is the longest string or byte field, in bytes. Request
	// bodies are at most 64 KiB, so no field can be longer.
	MaxStringBytes = 64 << 10
	// MaxListItems is the longest list of any kind in one record.
	MaxListItems = core.MaxRecordListItems
)

// Smallest encoded size of each list item: the encoding of its zero value
// (one byte per varint, empty strings and lists, fixed-size IDs and hashes).
// A list count is rejected when the bytes left could not hold that many
// items, so a hostile count can never make the decoder allocate more than a
// small multiple of its input. TestMinItemBytes checks these against the
// encoder.
const (
	minAccountChangeBytes = 28 // ID 16, Prev, Info flag, 10 list counts
	// minAccountChangeBytesV2 is the smallest account change of format 2,
	// which lacks the counts of idempotency entries and transfer updates.
	minAccountChangeBytesV2 = 26
	minBalanceBytes         = 2
	minLedgerEntryBytes     = 23
	minPositionBytes        = 41
	minTradeSummaryBytes    = 40
	minMarketChangeBytes    = 21
	minBookBytes            = 12
	// minBookBytesV2 is the smallest book of format 2, which lacks Seq.
	minBookBytesV2        = 11
	minNoteBytes          = 39
	minNoteReadBytes      = 1
	minVigPaymentBytes    = 21
	minTransferBytes      = 41
	minProposalBytes      = 61
	minVoteBytes          = 35
	minKeyChangeBytes     = 75 // 74 in format 2, without Purged
	minSessionChangeBytes = 53 // 52 in format 2, without Purged
	minIdemEntryBytes     = 37 // key length, index, fingerprint 32, time, status, answer length
)

// The smallest sizes of the items that format 3 extended, in format 2: the
// decoder takes these for a format-2 payload.
const (
	minTransferBytesV2 = 22
	minProposalBytesV2 = 57
	minVoteBytesV2     = 34
)

// Presence flag values for optional parts (Info pointers, Supply) and the
// encoding of booleans. Any other byte value is rejected, so that every
// accepted encoding is the canonical one.
const (
	flagAbsent  = 0
	flagPresent = 1
)

// validKind reports whether k is a record kind this version knows. The set
// is closed: a new kind needs a new decoder, never a reinterpretation.
func validKind(k core.Kind) bool {
	return (k >= core.KindAccountCreated && k <= core.KindOracleDeadline) ||
		(k >= core.KindDepositConfirmed && k <= core.KindOracleStakes) || k == core.KindAuthPurged ||
		k == core.KindPasswordChanged || k == core.KindImage
}

func validSide(s core.Side) bool     { return s == core.Yes || s == core.No }
func validStatus(s core.Status) bool { return s <= core.StatusSettling }
func validRole(r core.Role) bool     { return r == core.RoleSpeculator || r == core.RoleAdmin }
func validTier(t core.Tier) bool     { return t <= core.TierUnlimited }
func validTheme(t core.Theme) bool   { return t < core.NumThemes }

// Settings bits: any other bit is rejected.
const (
	settingNotificationsOff = 1 << 0
	settingHideLeaderboard  = 1 << 1
	settingBits             = settingNotificationsOff | settingHideLeaderboard
)

// validScopes reports whether s holds only known scope bits.
func validScopes(s core.Scopes) bool { return s&^core.AllScopes == 0 }

// Append appends the binary encoding of rec to dst and returns the
// extended slice. The encoding is canonical: Decode accepts exactly
// one encoding of each record, and Append produces it.
//
// Layout, in order: Kind (1 byte), Time (varint), the accounts, the markets,
// a presence byte and the supply change, the keys, the sessions. Lists are a
// uvarint count followed by the items; strings and byte slices a uvarint
// length followed by the bytes; unsigned integers are uvarints, signed ones
// and money.Amount zig-zag varints; UUIDs are their raw 16 bytes, hashes
// their raw 32; float64 is its IEEE 754 bits as 8 bytes little-endian;
// enums and booleans one byte each. An empty list or byte slice is encoded
// like a nil one and decodes as nil.
//
// A record that Decode would reject (an unknown enum value, a list,
// string or record over the limits above) is a bug in its producer, and
// Append panics rather than write what could never be read back.
func Append(dst []byte, rec *core.Record) []byte {
	start := len(dst)
	if !validKind(rec.Kind) {
		panic(fmt.Sprintf("BUG: record: encode record: unknown kind %d", rec.Kind))
	}
	dst = append(dst, byte(rec.Kind))
	dst = appendTime(dst, rec.Time)

	dst = appendCount(dst, len(rec.Accounts), "accounts")
	for i := range rec.Accounts {
		dst = appendAccountChange(dst, &rec.Accounts[i])
	}
	dst = appendCount(dst, len(rec.Markets), "markets")
	for i := range rec.Markets {
		dst = appendMarketChange(dst, &rec.Markets[i])
	}
	if rec.Supply == nil && len(rec.Keys)|len(rec.Sessions) == 0 {
		// No supply change, keys or sessions: a trade's record.
		dst = append(dst, flagAbsent, 0, 0)
		return checkSize(dst, start)
	}
	if rec.Supply == nil {
		dst = append(dst, flagAbsent)
	} else {
		dst = append(dst, flagPresent)
		dst = appendSupplyChange(dst, rec.Supply)
	}
	dst = appendCount(dst, len(rec.Keys), "keys")
	for i := range rec.Keys {
		dst = binary.AppendUvarint(dst, rec.Keys[i].Prev)
		dst = appendKey(dst, &rec.Keys[i].Key)
		dst = appendBool(dst, rec.Keys[i].Purged)
	}
	dst = appendCount(dst, len(rec.Sessions), "sessions")
	for i := range rec.Sessions {
		dst = binary.AppendUvarint(dst, rec.Sessions[i].Prev)
		dst = appendSession(dst, &rec.Sessions[i].Session)
		dst = appendBool(dst, rec.Sessions[i].Purged)
	}
	return checkSize(dst, start)
}

// checkSize returns dst after checking that the record appended from
// dst[start] is within MaxBytes.
func checkSize(dst []byte, start int) []byte {
	if n := len(dst) - start; n > MaxBytes {
		panic(fmt.Sprintf("BUG: record: encode record: %d bytes, limit %d", n, MaxBytes))
	}
	return dst
}

func appendAccountChange(dst []byte, a *core.AccountChange) []byte {
	dst = append(dst, a.ID[:]...)
	dst = binary.AppendUvarint(dst, a.Prev)
	if a.Info == nil {
		dst = append(dst, flagAbsent)
	} else {
		dst = append(dst, flagPresent)
		dst = appendString(dst, a.Info.Name, "account name")
		if !validRole(a.Info.Role) {
			panic(fmt.Sprintf("BUG: record: encode record: account %s: unknown role %d", a.ID, a.Info.Role))
		}
		dst = append(dst, byte(a.Info.Role))
		dst = appendBytes(dst, a.Info.PasswordHash, "password hash")
		dst = binary.AppendVarint(dst, a.Info.CreatedAt)
		dst = append(dst, a.Info.Referrer[:]...)
		dst = appendProfile(dst, a.ID, a.Info)
	}

	dst = appendCount(dst, len(a.Balances), "balances")
	for i := range a.Balances {
		dst = appendCurrency(dst, a.Balances[i].Currency)
		dst = appendAmount(dst, a.Balances[i].After)
	}
	dst = appendCount(dst, len(a.Ledger), "ledger entries")
	for i := range a.Ledger {
		dst = appendLedgerEntry(dst, &a.Ledger[i])
	}
	dst = appendCount(dst, len(a.Positions), "positions")
	for i := range a.Positions {
		dst = appendPosition(dst, &a.Positions[i])
	}
	dst = appendCount(dst, len(a.Trades), "trades")
	for i := range a.Trades {
		dst = appendTradeSummary(dst, &a.Trades[i])
	}
	// The lists a trade, a split or a merge leaves empty: their zero
	// counts at once rather than a count and an empty loop each.
	if len(a.Notes)|len(a.NotesRead)|len(a.Vig)|len(a.Transfers)|len(a.Idem)|len(a.TransferUpdates) == 0 {
		return append(dst, 0, 0, 0, 0, 0, 0)
	}
	dst = appendCount(dst, len(a.Notes), "notes")
	for i := range a.Notes {
		dst = appendNote(dst, &a.Notes[i])
	}
	dst = appendCount(dst, len(a.NotesRead), "notes read")
	for _, id := range a.NotesRead {
		dst = binary.AppendUvarint(dst, id)
	}
	dst = appendCount(dst, len(a.Vig), "vig payments")
	for i := range a.Vig {
		dst = appendVigPayment(dst, &a.Vig[i])
	}
	dst = appendCount(dst, len(a.Transfers), "transfers")
	for i := range a.Transfers {
		dst = appendTransfer(dst, &a.Transfers[i])
	}
	// Format 3.
	dst = appendCount(dst, len(a.Idem), "idempotency entries")
	for i := range a.Idem {
		dst = appendIdemEntry(dst, &a.Idem[i])
	}
	dst = appendCount(dst, len(a.TransferUpdates), "transfer updates")
	for i := range a.TransferUpdates {
		dst = appendTransfer(dst, &a.TransferUpdates[i])
	}
	return dst
}

func appendLedgerEntry(dst []byte, e *core.LedgerEntry) []byte {
	dst = binary.AppendUvarint(dst, e.Seq)
	dst = binary.AppendUvarint(dst, uint64(e.Index))
	dst = appendCurrency(dst, e.Currency)
	if !e.Type.Valid() {
		panic(fmt.Sprintf("BUG: record: encode record: ledger entry %d/%d: unknown type %d", e.Seq, e.Index, e.Type))
	}
	dst = append(dst, byte(e.Type))
	dst = appendAmount(dst, e.Amount)
	dst = appendAmount(dst, e.BalanceAfter)
	dst = append(dst, e.Ref[:]...)
	return appendTime(dst, e.Time)
}

func appendPosition(dst []byte, p *core.Position) []byte {
	dst = append(dst, p.Market[:]...)
	dst = appendCurrency(dst, p.Currency)
	dst = appendBool(dst, p.Closed)
	dst = appendAmounts(dst, []money.Amount{p.Shares[core.Yes], p.Shares[core.No], p.Cost[core.Yes], p.Cost[core.No],
		p.PaidIn, p.PaidOut})
	dst = append(dst, p.Referrer[:]...)
	return appendAmount(dst, p.RefVig)
}

func appendTradeSummary(dst []byte, t *core.TradeSummary) []byte {
	dst = append(dst, t.ID[:]...)
	dst = append(dst, t.Market[:]...)
	dst = appendCurrency(dst, t.Currency)
	dst = appendSide(dst, t.Side)
	dst = appendBool(dst, t.Sell)
	dst = appendAmounts(dst, []money.Amount{t.Shares, t.Cost, t.Vig})
	dst = appendString(dst, t.Reasoning, "trade reasoning")
	return appendTime(dst, t.Time)
}

func appendMarketChange(dst []byte, m *core.MarketChange) []byte {
	dst = append(dst, m.ID[:]...)
	dst = binary.AppendUvarint(dst, m.Prev)
	if m.Info == nil {
		dst = append(dst, flagAbsent)
	} else {
		in := m.Info
		dst = append(dst, flagPresent)
		dst = appendString(dst, in.Title, "market title")
		dst = appendString(dst, in.Description, "market description")
		dst = appendString(dst, in.Category, "market category")
		dst = append(dst, in.Creator[:]...)
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(in.Alpha))
		dst = appendAmount(dst, in.Q0)
		dst = binary.AppendVarint(dst, in.ClosesAt)
		dst = binary.AppendVarint(dst, in.CreatedAt)
		if !validStatus(in.Status) {
			panic(fmt.Sprintf("BUG: record: encode record: market %s: unknown status %d", m.ID, in.Status))
		}
		dst = append(dst, byte(in.Status))
		dst = appendSide(dst, in.Outcome)
		dst = binary.AppendVarint(dst, in.ResolvedAt)
		dst = appendStep(dst, m.ID, &in.Step)
	}
	dst = appendCount(dst, len(m.Books), "books")
	for i := range m.Books {
		b := &m.Books[i]
		dst = appendCurrency(dst, b.Currency)
		dst = appendAmounts(dst, []money.Amount{b.Q[core.Yes], b.Q[core.No], b.Subsidy, b.Collateral, b.Volume,
			b.Splits, b.VigTotal, b.VigCreator, b.VigHouse})
		dst = binary.AppendUvarint(dst, b.Trades)
		// Format 3.
		dst = binary.AppendUvarint(dst, b.Seq)
	}
	if len(m.Proposals)|len(m.Votes) == 0 {
		return append(dst, 0, 0) // no proposal or vote: a trade's market change
	}
	dst = appendCount(dst, len(m.Proposals), "proposals")
	for i := range m.Proposals {
		dst = appendProposal(dst, &m.Proposals[i])
	}
	dst = appendCount(dst, len(m.Votes), "votes")
	for i := range m.Votes {
		v := &m.Votes[i]
		dst = append(dst, v.Proposal[:]...)
		dst = append(dst, v.Account[:]...)
		dst = appendSide(dst, v.Outcome)
		dst = binary.AppendVarint(dst, v.Time)
		dst = appendAmount(dst, v.Stake) // format 3
	}
	return dst
}

func appendSupplyChange(dst []byte, s *core.SupplyChange) []byte {
	dst = binary.AppendUvarint(dst, s.Prev)
	for c := range money.NumCurrencies {
		dst = appendAmount(dst, s.Minted[c])
	}
	for c := range money.NumCurrencies {
		dst = appendAmount(dst, s.Burned[c])
	}
	return dst
}

func appendKey(dst []byte, k *core.Key) []byte {
	dst = append(dst, k.ID[:]...)
	dst = append(dst, k.Account[:]...)
	dst = appendString(dst, k.Name, "key name")
	dst = append(dst, k.Hash[:]...)
	dst = appendString(dst, k.Prefix, "key prefix")
	if !validScopes(k.Scopes) {
		panic(fmt.Sprintf("BUG: record: encode record: key %s: unknown scopes %#x", k.ID, k.Scopes))
	}
	dst = append(dst, byte(k.Scopes))
	if !validTier(k.Tier) {
		panic(fmt.Sprintf("BUG: record: encode record: key %s: unknown tier %d", k.ID, k.Tier))
	}
	dst = append(dst, byte(k.Tier))
	dst = binary.AppendVarint(dst, k.CreatedAt)
	dst = binary.AppendVarint(dst, k.ExpiresAt)
	dst = binary.AppendVarint(dst, k.RevokedAt)
	dst = binary.AppendUvarint(dst, k.TotalRequests)
	dst = binary.AppendVarint(dst, k.LastUsedAt)
	return dst
}

func appendSession(dst []byte, s *core.Session) []byte {
	dst = append(dst, s.Hash[:]...)
	dst = append(dst, s.Account[:]...)
	dst = binary.AppendVarint(dst, s.CreatedAt)
	dst = binary.AppendVarint(dst, s.ExpiresAt)
	dst = binary.AppendVarint(dst, s.RevokedAt)
	return dst
}

// appendCount appends a list's length. A length under 0x80, which is under
// MaxListItems too, is one byte appended here, so that appendCount is
// inlined: its calls, some twenty per trade record, were 340 of the
// 11,400 instructions of a trade with the log's fsync off (cachegrind,
// core's BenchmarkTradeFsyncOff). A longer one is checked against the
// limit by appendLongCount.
func appendCount(dst []byte, n int, what string) []byte {
	if uint(n) < 0x80 {
		return append(dst, byte(n))
	}
	return appendLongCount(dst, n, what)
}

func appendLongCount(dst []byte, n int, what string) []byte {
	if n > MaxListItems {
		panic(fmt.Sprintf("BUG: record: encode record: %d %s, limit %d", n, what, MaxListItems))
	}
	return binary.AppendUvarint(dst, uint64(n))
}

func appendString(dst []byte, s string, what string) []byte {
	if len(s) > MaxStringBytes {
		panic(fmt.Sprintf("BUG: record: encode record: %s of %d bytes, limit %d", what, len(s), MaxStringBytes))
	}
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendBytes(dst []byte, b []byte, what string) []byte {
	if len(b) > MaxStringBytes {
		panic(fmt.Sprintf("BUG: record: encode record: %s of %d bytes, limit %d", what, len(b), MaxStringBytes))
	}
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

func appendCurrency(dst []byte, c money.Currency) []byte {
	if !c.Valid() {
		panic(fmt.Sprintf("BUG: record: encode record: unknown currency %d", c))
	}
	return append(dst, byte(c))
}

func appendSide(dst []byte, s core.Side) []byte {
	if !validSide(s) {
		panic(fmt.Sprintf("BUG: record: encode record: unknown side %d", s))
	}
	return append(dst, byte(s))
}

func appendAmount(dst []byte, a money.Amount) []byte {
	return binary.AppendVarint(dst, int64(a))
}

// appendAmounts appends each of vals with appendAmount, with one check of
// dst's capacity for the run: binary.AppendVarint's loop appends a byte per
// seven bits, each append checking the capacity, where putUvarint's stores
// need no check but their index's. A record's runs of amounts (a book's
// nine, a position's six, a trade's three) go through its one loop rather
// than a copy of the encoding inlined per amount: the same bytes from less
// code, which a trade's path on its market's goroutine, longer than the
// first-level instruction cache holds together with the log's, fetches
// again for every record (docs/PERFORMANCE.md, "The trade's record on the
// market's goroutine"). TestAppendAmountsMatchesBinary holds the bytes to
// encoding/binary's.
func appendAmounts(dst []byte, vals []money.Amount) []byte {
	i := len(dst)
	if room := len(vals) * binary.MaxVarintLen64; cap(dst)-i < room {
		dst = slices.Grow(dst, room)
	}
	b := dst[:cap(dst)]
	for _, v := range vals {
		i = putUvarint(b, i, uint64(v<<1)^uint64(v>>63)) // zig-zag, as AppendVarint
	}
	return dst[:i]
}

// appendTime appends the varint of a time in Unix nanoseconds, the same
// bytes as binary.AppendVarint. A time of this century is a nine-byte
// varint (its zig-zag between 2^56 and 2^63), and a trade's record holds
// three (the record's, the ledger entry's and the trade's): the varint's
// loop costs about 11 instructions a byte, about 100 a time, where its
// first eight bytes are here spread from the low 56 bits in three
// shift-and-mask steps and stored at once. Spreading every varint that
// way cost more than it saved, the short ones being most of a record's
// (docs/PERFORMANCE.md, "The actor's trade path: the record's runs of
// amounts, and what did not pay"); a time of any other length takes
// binary.AppendVarint. TestAppendTimeMatchesBinary holds the bytes to
// encoding/binary's.
func appendTime(dst []byte, t int64) []byte {
	x := uint64(t<<1) ^ uint64(t>>63) // zig-zag, as AppendVarint
	if x>>56-1 >= 0x7f {              // not nine bytes: x < 2^56 or x >= 2^63
		return binary.AppendVarint(dst, t)
	}
	i := len(dst)
	if cap(dst)-i < 9 {
		dst = slices.Grow(dst, 9)
	}
	dst = dst[:i+9]
	v := x & (1<<56 - 1)
	v = v&(1<<28-1) | v>>28<<32                                   // 28-bit halves into 32-bit lanes
	v = v&0x00003fff_00003fff | (v&0x0fffc000_0fffc000)<<2        // 14-bit quarters into 16-bit lanes
	v = v&0x007f007f_007f007f | (v&0x3f803f80_3f803f80)<<1        // 7-bit groups into bytes
	binary.LittleEndian.PutUint64(dst[i:], v|0x80808080_80808080) // each with its continuation bit
	dst[i+8] = byte(x >> 56)
	return dst
}

// putUvarint writes the uvarint of x at b[i:], as binary.AppendUvarint
// would append it, and returns the index after it. b must have room.
// binary.PutVarint on b[i:] writes the same bytes, but cost a trade
// record about 225 instructions more (BenchmarkEncode under cachegrind,
// 2,657 against 2,431 an encode).
func putUvarint(b []byte, i int, x uint64) int {
	for x >= 0x80 {
		b[i] = byte(x) | 0x80
		x >>= 7
		i++
	}
	b[i] = byte(x)
	return i + 1
}

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, flagPresent)
	}
	return append(dst, flagAbsent)
}

// uuidSize and hashSize are the raw sizes of the fixed-size fields.
const (
	uuidSize = len(uuid.UUID{})
	hashSize = 32
)
