// Package recordgen makes random and realistic core.Records for the tests
// of the record codec, the log and the snapshots: every kind, field and enum
// value, reproducible from a seed.
package recordgen

import (
	"math"
	"math/rand/v2"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
)

// Gen makes random records covering every field, kind and enum value, for
// property tests. Empty lists and byte slices are nil, as the decoder
// returns them.
type Gen struct{ r *rand.Rand }

// New returns a generator seeded with seed; the same seed gives the same
// records.
func New(seed uint64) *Gen { return &Gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))} }

// Kinds lists every record kind the generator picks from.
var Kinds = []core.Kind{
	core.KindAccountCreated, core.KindMarketCreated, core.KindTrade, core.KindSplit, core.KindMerge,
	core.KindSettle, core.KindMarketClosed, core.KindReferrerSet, core.KindKeyCreated, core.KindKeyRevoked,
	core.KindSessionCreated, core.KindSessionRevoked, core.KindKeyUsage, core.KindProfile,
	core.KindNotesRead, core.KindDeposit, core.KindWithdrawal, core.KindOracleProposed,
	core.KindOracleChallenge, core.KindOracleVote, core.KindOracleDeadline, core.KindImage,
	core.KindDepositConfirmed, core.KindDepositRejected, core.KindWithdrawalSent, core.KindWithdrawalFailed,
	core.KindOracleStakes,
	core.KindAuthPurged,
	core.KindPasswordChanged,
}

// Record returns a random record of a random kind.
func (g *Gen) Record() *core.Record {
	rec := &core.Record{
		Kind: Kinds[g.r.IntN(len(Kinds))],
		Time: g.i64(),
	}
	rec.Accounts = genList(g, 4, g.accountChange)
	rec.Markets = genList(g, 3, g.marketChange)
	if g.r.IntN(2) == 0 {
		s := &core.SupplyChange{Prev: g.Uint64()}
		for c := range money.NumCurrencies {
			s.Minted[c] = g.amount()
			s.Burned[c] = g.amount()
		}
		rec.Supply = s
	}
	rec.Keys = genList(g, 3, func() core.KeyChange {
		return core.KeyChange{Prev: g.Uint64(), Key: g.key(), Purged: g.r.IntN(2) == 0}
	})
	rec.Sessions = genList(g, 3, func() core.SessionChange {
		return core.SessionChange{Prev: g.Uint64(), Session: core.Session{
			Hash: g.hash(), Account: g.uuid(), CreatedAt: g.i64(), ExpiresAt: g.i64(), RevokedAt: g.i64(),
		}, Purged: g.r.IntN(2) == 0}
	})
	return rec
}

// IntN returns a random int in [0, n).
func (g *Gen) IntN(n int) int { return g.r.IntN(n) }

// genList returns nil or 1..max items.
func genList[T any](g *Gen, max int, item func() T) []T {
	n := g.r.IntN(max + 1)
	if n == 0 {
		return nil
	}
	s := make([]T, n)
	for i := range s {
		s[i] = item()
	}
	return s
}

func (g *Gen) accountChange() core.AccountChange {
	a := core.AccountChange{ID: g.uuid(), Prev: g.Uint64()}
	if g.r.IntN(2) == 0 {
		a.Info = g.accountInfo()
	}
	a.Balances = genList(g, 2, func() core.Balance { return core.Balance{Currency: g.currency(), After: g.amount()} })
	a.Ledger = genList(g, 4, func() core.LedgerEntry {
		return core.LedgerEntry{
			Seq: g.Uint64(), Index: g.r.Uint32(), Currency: g.currency(),
			Type: core.TxType(1 + g.r.IntN(int(core.TxMarketReturn))), Amount: g.amount(),
			BalanceAfter: g.amount(), Ref: g.uuid(), Time: g.i64(),
		}
	})
	a.Positions = genList(g, 3, func() core.Position {
		p := core.Position{
			Market: g.uuid(), Currency: g.currency(), Closed: g.r.IntN(2) == 0,
			PaidIn: g.amount(), PaidOut: g.amount(), Referrer: g.uuid(), RefVig: g.amount(),
		}
		for s := range core.NumSides {
			p.Shares[s] = g.amount()
			p.Cost[s] = g.amount()
		}
		return p
	})
	a.Trades = genList(g, 3, func() core.TradeSummary {
		return core.TradeSummary{
			ID: g.uuid(), Market: g.uuid(), Currency: g.currency(), Side: core.Side(g.r.IntN(2)),
			Sell: g.r.IntN(2) == 0, Shares: g.amount(), Cost: g.amount(), Vig: g.amount(),
			Reasoning: g.str(100), Time: g.i64(),
		}
	})
	a.Notes = genList(g, 3, func() core.Note {
		return core.Note{
			ID: g.Uint64(), Kind: core.NoteKind(1 + g.r.IntN(int(core.NoteWithdrawalQueued))), Read: g.r.IntN(2) == 0,
			Time: g.i64(), Market: g.uuid(), Ref: g.uuid(), Currency: g.currency(), Amount: g.amount(),
			Outcome: core.Side(g.r.IntN(2)),
		}
	})
	a.NotesRead = genList(g, 3, g.Uint64)
	a.Vig = genList(g, 2, func() core.VigPayment {
		return core.VigPayment{
			Market: g.uuid(), Currency: g.currency(), Role: core.VigRole(1 + g.r.IntN(2)),
			Accrued: g.amount(), Paid: g.amount(), Time: g.i64(),
		}
	})
	a.Transfers = genList(g, 2, g.transfer)
	a.Idem = genList(g, 2, g.idemEntry)
	a.TransferUpdates = genList(g, 2, g.transfer)
	return a
}

// accountInfo draws an account's scalar fields.
func (g *Gen) accountInfo() *core.AccountInfo {
	return &core.AccountInfo{
		Name:          g.str(20),
		Role:          core.Role(g.r.IntN(2)),
		PasswordHash:  g.Bytes(60),
		CreatedAt:     g.i64(),
		Referrer:      g.uuid(),
		ReferralCode:  g.str(8),
		Mode:          g.currency(),
		Wallet:        g.str(42),
		Persona:       g.str(50),
		TOSVersion:    g.str(5),
		TOSAcceptedAt: g.i64(),
		Settings: core.Settings{
			NotificationsOff:    g.r.IntN(2) == 0,
			HideFromLeaderboard: g.r.IntN(2) == 0,
			Theme:               core.Theme(g.r.IntN(core.NumThemes)),
		},
	}
}

// idemEntry draws an Idempotency-Key entry; an empty answer is nil, as the
// decoder gives it back.
func (g *Gen) idemEntry() core.IdemEntry {
	key := g.str(core.MaxIdempotencyKeyBytes)
	if key == "" {
		key = "k"
	}
	var answer []byte
	if g.r.IntN(2) == 0 {
		answer = []byte(g.str(300))
	}
	if len(answer) == 0 {
		answer = nil
	}
	return core.IdemEntry{Key: key, Index: uint32(g.Uint64()), Fingerprint: g.hash(), Time: g.i64(),
		Status: uint16(g.Uint64()), Answer: answer}
}

func (g *Gen) transfer() core.Transfer {
	return core.Transfer{
		ID: g.uuid(), Kind: core.TransferKind(1 + g.r.IntN(2)), Status: core.TransferStatus(1 + g.r.IntN(int(core.TransferFailed))),
		Amount: g.amount(), TxHash: g.str(66), Wallet: g.str(42), Time: g.i64(),
		Claimed: g.amount(), ChainTx: g.str(66), ResolvedAt: g.i64(), ResolvedBy: g.uuid(),
	}
}

func (g *Gen) marketChange() core.MarketChange {
	m := core.MarketChange{ID: g.uuid(), Prev: g.Uint64()}
	if g.r.IntN(2) == 0 {
		m.Info = &core.MarketInfo{
			Title: g.str(40), Description: g.str(200), Category: g.str(10), Creator: g.uuid(),
			Alpha: g.float(), Q0: g.amount(), ClosesAt: g.i64(), CreatedAt: g.i64(),
			Status: core.Status(g.r.IntN(int(core.NumStatuses))), Outcome: core.Side(g.r.IntN(2)), ResolvedAt: g.i64(),
		}
		if g.r.IntN(2) == 0 {
			s := &m.Info.Step
			s.Kind, s.Cursor = core.KindSettle, g.uuid()
			if g.r.IntN(2) == 0 {
				s.Oracle = g.uuid()
			}
			if g.r.IntN(2) == 0 {
				s.Note = core.Note{ID: g.Uint64(), Kind: core.NoteKind(1 + g.r.IntN(int(core.NoteWithdrawalQueued))),
					Time: g.i64(), Market: g.uuid(), Ref: g.uuid(), Currency: g.currency(), Outcome: core.Side(g.r.IntN(2))}
			}
			for c := range money.NumCurrencies {
				s.Pool[c] = g.amount()
				for side := range core.NumSides {
					s.Closed[c][side] = g.amount()
				}
			}
		}
	}
	m.Books = genList(g, 2, func() core.Book {
		b := core.Book{
			Currency: g.currency(), Subsidy: g.amount(), Collateral: g.amount(), Volume: g.amount(),
			Splits: g.amount(), VigTotal: g.amount(), VigCreator: g.amount(), VigHouse: g.amount(),
			Trades: g.Uint64(), Seq: g.Uint64(),
		}
		for s := range core.NumSides {
			b.Q[s] = g.amount()
		}
		return b
	})
	m.Proposals = genList(g, 2, func() core.Proposal {
		return core.Proposal{
			ID: g.uuid(), Outcome: core.Side(g.r.IntN(2)), Status: core.ProposalStatus(1 + g.r.IntN(int(core.ProposalCancelled))),
			Proposer: g.uuid(), Challenger: g.uuid(), Bond: g.amount(), Votes: [core.NumSides]uint64{g.Uint64(), g.Uint64()},
			ChallengeDeadline: g.i64(), VoteDeadline: g.i64(), CreatedAt: g.i64(), ResolvedAt: g.i64(),
			Stakes: [core.NumSides]money.Amount{g.amount(), g.amount()}, StakeCursor: g.Uint64(), StakesPaid: g.amount(),
		}
	})
	m.Votes = genList(g, 3, func() core.Vote {
		return core.Vote{Proposal: g.uuid(), Account: g.uuid(), Outcome: core.Side(g.r.IntN(2)), Time: g.i64(), Stake: g.amount()}
	})
	return m
}

func (g *Gen) key() core.Key {
	return core.Key{
		ID: g.uuid(), Account: g.uuid(), Name: g.str(30), Hash: g.hash(), Prefix: g.str(17),
		Scopes: core.Scopes(g.r.IntN(int(core.AllScopes) + 1)), Tier: core.Tier(g.r.IntN(3)),
		CreatedAt: g.i64(), ExpiresAt: g.i64(), RevokedAt: g.i64(), TotalRequests: g.Uint64(), LastUsedAt: g.i64(),
	}
}

// Uint64 returns values of every varint length, the extremes included.
func (g *Gen) Uint64() uint64 {
	switch g.r.IntN(6) {
	case 0:
		return 0
	case 1:
		return math.MaxUint64
	case 2:
		return uint64(g.r.IntN(128))
	}
	return g.r.Uint64() >> g.r.IntN(64)
}

func (g *Gen) i64() int64 {
	switch g.r.IntN(6) {
	case 0:
		return math.MinInt64
	case 1:
		return math.MaxInt64
	}
	v := int64(g.Uint64() >> 1)
	if g.r.IntN(2) == 0 {
		v = -v
	}
	return v
}

func (g *Gen) amount() money.Amount { return money.Amount(g.i64()) }

func (g *Gen) currency() money.Currency { return money.Currency(g.r.IntN(money.NumCurrencies)) }

// float returns finite values, so that reflect.DeepEqual can compare them;
// NaN payloads are covered by the fuzz targets' byte comparison.
func (g *Gen) float() float64 {
	switch g.r.IntN(4) {
	case 0:
		return 0
	case 1:
		return math.Copysign(0, -1)
	case 2:
		return math.MaxFloat64
	}
	return g.r.NormFloat64() * 1000
}

func (g *Gen) uuid() (id uuid.UUID) {
	if g.r.IntN(4) == 0 {
		return uuid.Nil
	}
	for i := range id {
		id[i] = byte(g.r.Uint32())
	}
	return id
}

func (g *Gen) hash() (h [32]byte) {
	for i := range h {
		h[i] = byte(g.r.Uint32())
	}
	return h
}

// str returns "" or up to max random bytes, not necessarily UTF-8: the
// codec does not interpret strings.
func (g *Gen) str(max int) string { return string(g.Bytes(max)) }

// Bytes returns nil or 1..max random bytes.
func (g *Gen) Bytes(max int) []byte {
	n := g.r.IntN(max + 1)
	if n == 0 {
		return nil
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.Uint32())
	}
	return b
}

// Trade is a realistic trade: one account change with a balance, a
// ledger entry, a position and a trade summary, and one market change with
// one book. It encodes to about 250 bytes.
func Trade(seq uint64) *core.Record {
	acct := uuid.UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	mkt := uuid.UUID{0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf, 0xb0}
	trade := uuid.UUID{0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xcb, 0xcc, 0xcd, 0xce, 0xcf, byte(seq)}
	now := int64(1_767_225_600_000_000_000) + int64(seq)*1_000_000
	cost := money.Amount(12_345_678)
	return &core.Record{
		Kind: core.KindTrade,
		Time: now,
		Accounts: []core.AccountChange{{
			ID:       acct,
			Prev:     seq - 1,
			Balances: []core.Balance{{Currency: money.KP, After: 987_654_321_000}},
			Ledger: []core.LedgerEntry{{
				Seq: seq, Index: 0, Currency: money.KP, Type: core.TxTradeBuy,
				Amount: -cost, BalanceAfter: 987_654_321_000, Ref: trade, Time: now,
			}},
			Positions: []core.Position{{
				Market: mkt, Currency: money.KP,
				Shares: [core.NumSides]money.Amount{25_000_000, 0},
				Cost:   [core.NumSides]money.Amount{12_000_000, 0},
				PaidIn: 12_345_678, Referrer: uuid.Nil,
			}},
			Trades: []core.TradeSummary{{
				ID: trade, Market: mkt, Currency: money.KP, Side: core.Yes,
				Shares: 25_000_000, Cost: cost, Vig: 123_456,
				Reasoning: "yes is underpriced",
				Time:      now,
			}},
		}},
		Markets: []core.MarketChange{{
			ID:   mkt,
			Prev: seq - 1,
			Books: []core.Book{{
				Currency: money.KP,
				Q:        [core.NumSides]money.Amount{1_025_000_000, 1_000_000_000},
				Subsidy:  69_314_718, Collateral: 1_081_660_396, Volume: 5_432_100_000,
				VigTotal: 54_321_000, VigCreator: 27_160_500, VigHouse: 27_160_500, Trades: seq,
			}},
		}},
	}
}
