package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"

	"marketd/core"
	"marketd/core/money"

	"marketd/wal/record/recordgen"
)

const codecSeed = 20261122

func TestRecordRoundTrip(t *testing.T) {
	t.Logf("seed %d", codecSeed)
	g := recordgen.New(codecSeed)
	for i := range 3000 {
		rec := g.Record()
		b := Append(nil, rec)
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("record %d (seed %d): decode: %v\nrecord: %+v", i, codecSeed, err, rec)
		}
		if !reflect.DeepEqual(got, rec) {
			t.Fatalf("record %d (seed %d): round trip differs\ngot:  %+v\nwant: %+v", i, codecSeed, got, rec)
		}
		if b2 := Append(nil, got); !bytes.Equal(b2, b) {
			t.Fatalf("record %d (seed %d): re-encoding differs\ngot:  %x\nwant: %x", i, codecSeed, b2, b)
		}
		// Appending to a non-empty buffer encodes the same bytes after it.
		prefix := []byte("prefix")
		if b3 := Append(prefix, rec); !bytes.Equal(b3[len(prefix):], b) {
			t.Fatalf("record %d: Append after a prefix differs", i)
		}
	}
}

func TestRecordEmptyListsDecodeAsNil(t *testing.T) {
	empty := &core.Record{
		Kind:     core.KindTrade,
		Accounts: []core.AccountChange{{Info: &core.AccountInfo{PasswordHash: []byte{}}, Balances: []core.Balance{}}},
		Markets:  []core.MarketChange{},
		Keys:     []core.KeyChange{},
		Sessions: []core.SessionChange{},
	}
	got, err := Decode(Append(nil, empty))
	if err != nil {
		t.Fatal(err)
	}
	want := &core.Record{Kind: core.KindTrade, Accounts: []core.AccountChange{{Info: &core.AccountInfo{}}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestDecodeRecordRejectsTruncationAndTrailingBytes(t *testing.T) {
	g := recordgen.New(codecSeed + 1)
	for i := range 40 {
		b := Append(nil, g.Record())
		for n := range len(b) {
			if _, err := Decode(b[:n]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("record %d cut to %d of %d bytes: err %v, want ErrCorrupt\nbytes: %x", i, n, len(b), err, b)
			}
		}
		for _, extra := range [][]byte{{0}, {1}, {0xff, 0xff}} {
			if _, err := Decode(append(b[:len(b):len(b)], extra...)); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("record %d with trailing %x: err %v, want ErrCorrupt", i, extra, err)
			}
		}
	}
}

// enc builds record encodings by hand for the rejection table.
type enc []byte

func (e enc) u(v uint64) enc   { return binary.AppendUvarint(e, v) }
func (e enc) i(v int64) enc    { return binary.AppendVarint(e, v) }
func (e enc) b(v ...byte) enc  { return append(e, v...) }
func (e enc) zeros(n int) enc  { return append(e, make([]byte, n)...) }
func (e enc) str(s string) enc { return append(e.u(uint64(len(s))), s...) }
func recordHead(kind byte) enc { return enc{kind}.i(0) }
func emptyTail(e enc) enc      { return e.u(0).b(0).u(0).u(0) } // markets, supply, keys, sessions
func oneAccount(e enc) enc     { return e.u(1).zeros(16).u(0) } // count, ID, Prev; Info flag next
func accountLists(e enc) enc   { return e.u(0).u(0).u(0).u(0).u(0).u(0).u(0).u(0).u(0).u(0) }

// profile is the encoding of an account info's fields after the referrer,
// with the given settings bits and theme.
func profile(bits, theme byte) enc {
	return enc{}.str("").b(0).str("").str("").str("").i(0).b(bits, theme)
}

// info is an account info encoding with the given role and profile.
func info(role byte, prof enc) enc {
	return append(enc{1}.str("n").b(role).u(0).i(0).zeros(16), prof...)
}
func accountRecord(info enc) enc {
	return emptyTail(accountLists(append(oneAccount(recordHead(3)), info...)))
}

func TestDecodeRecordRejects(t *testing.T) {
	valid := emptyTail(recordHead(3).u(0))
	if _, err := Decode(valid); err != nil {
		t.Fatalf("hand-built empty record: %v", err)
	}
	ledger := func(idx uint64, currency, typ byte) enc {
		e := oneAccount(recordHead(3)).b(0) // no info
		e = e.u(0).u(1).u(5).u(idx).b(currency, typ).i(1).i(1).zeros(16).i(0)
		return emptyTail(e.u(0).u(0).u(0).u(0).u(0).u(0).u(0).u(0))
	}
	// marketStep is a market record whose info ends with step (format
	// version 3; empty: version 2).
	marketStep := func(status, outcome byte, step enc) enc {
		e := recordHead(2).u(0).u(1).zeros(16).u(0).b(1)
		e = e.str("t").str("d").str("c").zeros(16).zeros(8).i(0).i(0).i(0).b(status, outcome).i(0)
		e = append(e, step...)
		return e.u(0).u(0).u(0).b(0).u(0).u(0)
	}
	market := func(status, outcome byte) enc { return marketStep(status, outcome, enc{0}) }
	// step is a present Step of the kind given, cursor byte c, zero else.
	step := func(kind, c byte) enc {
		return enc{1, kind}.b(c).zeros(15).zeros(16).i(0).i(0).i(0).i(0).i(0).i(0).b(0)
	}
	if _, err := Decode(marketStep(4, 1, step(6, 1))); err != nil {
		t.Fatalf("hand-built settling market record: %v", err)
	}
	if rec, err := DecodeVersion(2, marketStep(2, 1, nil)); err != nil || rec.Markets[0].Info.Step != (core.Step{}) {
		t.Fatalf("hand-built version-2 market record: %+v, %v", rec, err)
	}
	// keyPurged is a key record whose change ends with the purged byte
	// (format 3).
	keyPurged := func(scopes, tier, purged byte) enc {
		e := recordHead(9).u(0).u(0).b(0).u(1).u(0)
		e = e.zeros(32).str("n").zeros(32).str("p").b(scopes, tier).i(0).i(0).i(0).u(0).i(0)
		return e.b(purged).u(0)
	}
	key := func(scopes, tier byte) enc { return keyPurged(scopes, tier, 0) }
	if rec, err := Decode(keyPurged(7, 2, 1)); err != nil || !rec.Keys[0].Purged {
		t.Fatalf("hand-built purged key record: %+v, %v", rec, err)
	}
	if _, err := Decode(ledger(7, 0, 2)); err != nil {
		t.Fatalf("hand-built ledger record: %v", err)
	}
	if _, err := Decode(market(0, 1)); err != nil {
		t.Fatalf("hand-built market record: %v", err)
	}
	if _, err := Decode(key(7, 2)); err != nil {
		t.Fatalf("hand-built key record: %v", err)
	}

	tests := []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "truncated at byte 0"},
		// kind, time, no accounts, no markets: the supply's flag is missing.
		{"cut before the supply flag", recordHead(3).u(0).u(0), "truncated at byte 4"},
		// The first error stands: the reads after the bad flag find no
		// bytes left.
		{"supply flag 2, then nothing", recordHead(3).u(0).u(0).b(2), "supply: flag byte 2 at byte 4"},
		{"kind 0", emptyTail(recordHead(0).u(0)), "unknown kind 0"},
		{"kind 27", emptyTail(recordHead(27).u(0)), "unknown kind 27"},
		{"kind 99", emptyTail(recordHead(99).u(0)), "unknown kind 99"},
		{"non-minimal varint", emptyTail(enc{3}.b(0x80, 0x00).u(0)), "malformed varint"},
		{"varint over 64 bits", enc{3}.b(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02), "malformed varint"},
		{"varint of 11 bytes", enc{3}.b(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x80, 0x00), "malformed varint"},
		{"account count past the bytes left", recordHead(3).u(1).zeros(20), "1 accounts do not fit"},
		{"huge account count", recordHead(3).u(1 << 40), "accounts do not fit"},
		{"market count over MaxListItems", recordHead(3).u(0).u(MaxListItems + 1).zeros(20 * (MaxListItems + 1)), "markets do not fit"},
		{"supply flag 2", recordHead(3).u(0).u(0).b(2).u(0).u(0), "supply: flag byte 2"},
		{"info flag 2", accountRecord(enc{2}), "account info: flag byte 2"},
		{"role 2", accountRecord(info(2, profile(0, 0))), "unknown role 2"},
		{"settings bit 2", accountRecord(info(0, profile(4, 0))), "unknown settings bits 0x4"},
		{"theme 3", accountRecord(info(0, profile(0, 3))), "unknown theme 3"},
		{"note kind 13", emptyTail(append(oneAccount(recordHead(3)).b(0).u(0).u(0).u(0).u(0).u(1).u(1).b(13), make([]byte, 40)...)), "unknown note kind 13"},
		{"password hash past the bytes left", accountRecord(enc{1}.str("n").b(0).u(100)), "password hash of 100 bytes does not fit"},
		{"name over MaxStringBytes", accountRecord(enc{1}.u(MaxStringBytes + 1).zeros(MaxStringBytes + 1)), "account name of 65537 bytes"},
		{"ledger index over uint32", ledger(1<<32, 0, 2), "ledger index 4294967296"},
		{"currency 2", ledger(0, 2, 2), "unknown currency 2"},
		{"tx type 0", ledger(0, 0, 0), "unknown ledger type 0"},
		{"tx type 19", ledger(0, 0, 19), "unknown ledger type 19"},
		{"status 5", market(5, 0), "unknown status 5"},
		{"step flag 2", marketStep(4, 0, enc{2}), "market step: flag byte 2"},
		{"step of kind 99", marketStep(4, 0, step(99, 1)), "step of unknown kind 99"},
		{"zero step present", marketStep(4, 0, step(0, 0)), "zero market step present"},
		{"step note flag 2", marketStep(4, 0, append(step(6, 1)[:len(step(6, 1))-1], 2)), "market step note: flag byte 2"},
		{"version-2 market read as version 3", marketStep(2, 0, nil), "truncated"},
		{"side 2", market(0, 2), "unknown side 2"},
		{"scopes 8", key(8, 0), "unknown scopes 0x8"},
		{"tier 3", key(1, 3), "unknown tier 3"},
		{"key purged flag 2", keyPurged(1, 0, 2), "key purged: flag byte 2"},
		{"trailing byte", append(valid[:len(valid):len(valid)], 0), "1 trailing bytes"},
		{"over MaxBytes", make([]byte, MaxBytes+1), "limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := Decode(tc.b)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("input %x\ngot %+v, %v\nwant ErrCorrupt containing %q", head(tc.b), rec, err, tc.want)
			}
		})
	}
}

func head(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

func TestMinItemBytes(t *testing.T) {
	size := func(rec *core.Record) int { return len(Append(nil, rec)) }
	base := size(&core.Record{Kind: core.KindTrade})
	one := func(rec *core.Record) int { return size(rec) - base }
	acct := core.AccountChange{}
	tests := []struct {
		name string
		got  int
		want int
	}{
		{"account change", one(&core.Record{Kind: core.KindTrade, Accounts: []core.AccountChange{acct}}), minAccountChangeBytes},
		{"balance", one(&core.Record{Kind: core.KindTrade, Accounts: []core.AccountChange{{Balances: make([]core.Balance, 1)}}}) - minAccountChangeBytes, minBalanceBytes},
		{"ledger entry", one(&core.Record{Kind: core.KindTrade, Accounts: []core.AccountChange{{Ledger: []core.LedgerEntry{{Type: core.TxTradeBuy}}}}}) - minAccountChangeBytes, minLedgerEntryBytes},
		{"position", one(&core.Record{Kind: core.KindTrade, Accounts: []core.AccountChange{{Positions: make([]core.Position, 1)}}}) - minAccountChangeBytes, minPositionBytes},
		{"trade summary", one(&core.Record{Kind: core.KindTrade, Accounts: []core.AccountChange{{Trades: make([]core.TradeSummary, 1)}}}) - minAccountChangeBytes, minTradeSummaryBytes},
		{"market change", one(&core.Record{Kind: core.KindTrade, Markets: make([]core.MarketChange, 1)}), minMarketChangeBytes},
		{"book", one(&core.Record{Kind: core.KindTrade, Markets: []core.MarketChange{{Books: make([]core.Book, 1)}}}) - minMarketChangeBytes, minBookBytes},
		{"key change", one(&core.Record{Kind: core.KindTrade, Keys: make([]core.KeyChange, 1)}), minKeyChangeBytes},
		{"session change", one(&core.Record{Kind: core.KindTrade, Sessions: make([]core.SessionChange, 1)}), minSessionChangeBytes},
		{"note", one(&core.Record{Kind: core.KindTrade, Accounts: []core.AccountChange{{Notes: []core.Note{{Kind: core.NoteMarketSettled}}}}}) - minAccountChangeBytes, minNoteBytes},
		{"note read", one(&core.Record{Kind: core.KindTrade, Accounts: []core.AccountChange{{NotesRead: []uint64{0}}}}) - minAccountChangeBytes, minNoteReadBytes},
		{"vig payment", one(&core.Record{Kind: core.KindTrade, Accounts: []core.AccountChange{{Vig: []core.VigPayment{{Role: core.VigCreator}}}}}) - minAccountChangeBytes, minVigPaymentBytes},
		{"transfer", one(&core.Record{Kind: core.KindTrade, Accounts: []core.AccountChange{{Transfers: []core.Transfer{{Kind: core.TransferDeposit, Status: core.TransferCredited}}}}}) - minAccountChangeBytes, minTransferBytes},
		{"proposal", one(&core.Record{Kind: core.KindTrade, Markets: []core.MarketChange{{Proposals: []core.Proposal{{Status: core.ProposalProposed}}}}}) - minMarketChangeBytes, minProposalBytes},
		{"idempotency entry", one(&core.Record{Kind: core.KindTrade, Accounts: []core.AccountChange{{Idem: []core.IdemEntry{{Key: "k"}}}}}) - minAccountChangeBytes - 1, minIdemEntryBytes},
		{"vote", one(&core.Record{Kind: core.KindTrade, Markets: []core.MarketChange{{Votes: make([]core.Vote, 1)}}}) - minMarketChangeBytes, minVoteBytes},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: smallest encoding %d bytes, constant %d", tc.name, tc.got, tc.want)
		}
	}
}

func TestAppendRecordPanicsOnInvalid(t *testing.T) {
	tests := []struct {
		name string
		rec  *core.Record
	}{
		{"kind", &core.Record{Kind: 0}},
		{"currency", &core.Record{Kind: core.KindTrade, Accounts: []core.AccountChange{{Balances: []core.Balance{{Currency: 2}}}}}},
		{"tx type", &core.Record{Kind: core.KindTrade, Accounts: []core.AccountChange{{Ledger: []core.LedgerEntry{{Type: 0}}}}}},
		{"role", &core.Record{Kind: core.KindTrade, Accounts: []core.AccountChange{{Info: &core.AccountInfo{Role: 9}}}}},
		{"side", &core.Record{Kind: core.KindTrade, Accounts: []core.AccountChange{{Trades: []core.TradeSummary{{Side: 2}}}}}},
		{"status", &core.Record{Kind: core.KindTrade, Markets: []core.MarketChange{{Info: &core.MarketInfo{Status: core.NumStatuses}}}}},
		{"step kind", &core.Record{Kind: core.KindTrade, Markets: []core.MarketChange{{Info: &core.MarketInfo{Step: core.Step{Kind: 99}}}}}},
		{"tier", &core.Record{Kind: core.KindTrade, Keys: []core.KeyChange{{Key: core.Key{Tier: 3}}}}},
		{"scopes", &core.Record{Kind: core.KindTrade, Keys: []core.KeyChange{{Key: core.Key{Scopes: 8}}}}},
		{"string", &core.Record{Kind: core.KindTrade, Keys: []core.KeyChange{{Key: core.Key{Name: strings.Repeat("x", MaxStringBytes+1)}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.HasPrefix(r.(string), "BUG: ") {
					t.Fatalf("recovered %v, want a BUG panic", r)
				}
			}()
			Append(nil, tc.rec)
		})
	}
}

func TestTradeRecordSize(t *testing.T) {
	n := len(AppendFramed(nil, 123456, recordgen.Trade(123456)))
	if n < 200 || n > 300 {
		t.Fatalf("trade frame is %d bytes, want 200..300 for the benchmarks", n)
	}
	t.Logf("trade frame: %d bytes", n)
	_ = money.KP
}

// TestUvarintMatchesReference compares the decoder's uvarint with
// binary.Uvarint plus the minimality rule, on every length and on random
// bytes.
func TestUvarintMatchesReference(t *testing.T) {
	reference := func(b []byte) (uint64, int, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 || (n > 1 && b[n-1] == 0) {
			return 0, 0, false
		}
		return v, n, true
	}
	g := recordgen.New(codecSeed + 5)
	var inputs [][]byte
	for range 20000 {
		b := g.Bytes(12)
		// Bias toward long varints: set continuation bits on a prefix.
		for i := range min(len(b), g.IntN(12)) {
			b[i] |= 0x80
		}
		inputs = append(inputs, b)
	}
	for _, v := range []uint64{0, 1, 127, 128, 1<<63 - 1, 1 << 63, 1<<64 - 1} {
		inputs = append(inputs, binary.AppendUvarint(nil, v))
	}
	inputs = append(inputs, []byte{0x80, 0}, bytes.Repeat([]byte{0xff}, 9), append(bytes.Repeat([]byte{0xff}, 9), 2))
	for _, b := range inputs {
		d := decoder{b: b}
		got := d.uvarint()
		want, n, ok := reference(b)
		if ok != (d.err == nil) || (ok && (got != want || d.off != n)) {
			t.Fatalf("input %x: got %d, off %d, err %v; want %d, %d bytes, ok %v", b, got, d.off, d.err, want, n, ok)
		}
	}
}
