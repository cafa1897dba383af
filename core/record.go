package core

import (
	"slices"

	"github.com/google/uuid"

	"marketd/core/money"
)

// Kind says which operation produced a record. It is kept for audit and
// statistics; replay does not depend on it, since every record carries
// after-images of what it changed. Values are written to disk and never
// change meaning.
type Kind uint8

// The record kinds.
const (
	KindAccountCreated  Kind = 1
	KindMarketCreated   Kind = 2
	KindTrade           Kind = 3
	KindSplit           Kind = 4
	KindMerge           Kind = 5
	KindSettle          Kind = 6
	KindMarketClosed    Kind = 7
	KindReferrerSet     Kind = 8
	KindKeyCreated      Kind = 9
	KindKeyRevoked      Kind = 10
	KindSessionCreated  Kind = 11
	KindSessionRevoked  Kind = 12
	KindKeyUsage        Kind = 13
	KindProfile         Kind = 14 // settings, persona, terms, trading mode, wallet, referral code
	KindNotesRead       Kind = 15
	KindDeposit         Kind = 16
	KindWithdrawal      Kind = 17
	KindOracleProposed  Kind = 18
	KindOracleChallenge Kind = 19
	KindOracleVote      Kind = 20
	KindOracleDeadline  Kind = 21 // a proposal accepted, rejected or escalated at its deadline
	// Wave 2, kinds 22-29: custody's admin operations and the oracle's
	// stake payouts.
	KindDepositConfirmed Kind = 22
	KindDepositRejected  Kind = 23
	KindWithdrawalSent   Kind = 24
	KindWithdrawalFailed Kind = 25
	KindOracleStakes     Kind = 26 // a bounded batch of a proposal's vote stakes paid out
	// KindAuthPurged removes expired sessions and keys revoked or expired
	// long ago (auth_purge.go).
	KindAuthPurged Kind = 30
	// Wave 2, kinds 38-43: account safety. KindPasswordChanged stores an
	// account's new password hash and ends its other sessions
	// (password.go).
	KindPasswordChanged Kind = 38
	// KindImage marks a snapshot chunk: whole objects, where each change's
	// Prev is the object's LSN at capture instead of its LSN before a change.
	KindImage Kind = 100
)

// Record is the durable outcome of one operation: after-images of every
// object it changed, each with the LSN (sequence number of the last record
// that changed the object) it follows. Replay applies these images; it never
// recomputes prices, so it cannot depend on floating-point results being
// reproduced bit for bit. An object whose LSN is not the Prev a record names
// reveals a gap or a reordering, and replay stops with an error.
type Record struct {
	Kind     Kind
	Time     int64 // Unix nanoseconds at which the operation was applied
	Accounts []AccountChange
	Markets  []MarketChange
	Supply   *SupplyChange
	Keys     []KeyChange
	Sessions []SessionChange
}

// AccountChange is what a record does to one account. Slices hold only what
// changed: the new balances, the ledger entries appended, the positions
// rewritten and the trades appended to the recent-trade list.
type AccountChange struct {
	ID        uuid.UUID
	Prev      uint64       // the account's LSN before this record; 0 creates it
	Info      *AccountInfo // after-image of the scalar fields, when any changed
	Balances  []Balance
	Ledger    []LedgerEntry
	Positions []Position
	Trades    []TradeSummary
	Notes     []Note       // notifications appended
	NotesRead []uint64     // IDs of notifications marked read
	Vig       []VigPayment // vig settlements appended
	Transfers []Transfer   // deposits and withdrawals appended
	// Idem holds the stored answers of idempotent requests: the one an
	// operation answers (all of them in an image).
	Idem []IdemEntry
	// TransferUpdates are after-images of transfers the account has
	// already, replacing them by ID: a pending deposit confirmed or
	// rejected, a queued withdrawal sent or failed (format 3).
	TransferUpdates []Transfer
}

// AccountInfo is the after-image of an account's scalar fields.
type AccountInfo struct {
	Name          string
	Role          Role
	PasswordHash  []byte // the slow salted hash; never the password
	CreatedAt     int64  // Unix nanoseconds
	Referrer      uuid.UUID
	ReferralCode  string         // ReferralCodeLen characters; "" for the house
	Mode          money.Currency // trading mode: the currency of trades, splits and merges
	Wallet        string         // linked wallet address in EIP-55 form; "" when none
	Persona       string
	TOSVersion    string // the terms of service accepted last; "" when none
	TOSAcceptedAt int64  // Unix nanoseconds; 0 when none
	Settings      Settings
}

// Balance is a balance after a change.
type Balance struct {
	Currency money.Currency
	After    money.Amount
}

// LedgerEntry is one signed movement of an account's balance. Its ID is
// derived from (Seq, Index) by LedgerEntryID, so the log need not carry a
// random identifier per entry.
type LedgerEntry struct {
	Seq          uint64 // the record that made the entry
	Index        uint32 // the entry's position among that record's entries
	Currency     money.Currency
	Type         TxType
	Amount       money.Amount // signed: a buy is negative
	BalanceAfter money.Amount
	Ref          uuid.UUID // the trade, split, payout... that caused it
	Time         int64     // Unix nanoseconds
}

// Position is an account's holding in one market and currency. It stays
// until the market settles, even at zero shares, because the settlement's
// referrer cap needs PaidIn and PaidOut.
type Position struct {
	Market   uuid.UUID
	Currency money.Currency
	Closed   bool                   // settled: the position is removed
	Shares   [NumSides]money.Amount // held, per side
	Cost     [NumSides]money.Amount // cost basis, per side
	PaidIn   money.Amount           // buys and splits paid into the market
	PaidOut  money.Amount           // sells, merges and payouts taken out
	Referrer uuid.UUID              // who the RefVig accrues to (Nil: none)
	RefVig   money.Amount           // vig accrued to Referrer from this holder
}

// TradeSummary is a trade as shown in an account's recent trades.
type TradeSummary struct {
	ID        uuid.UUID
	Market    uuid.UUID
	Currency  money.Currency
	Side      Side
	Sell      bool
	Shares    money.Amount
	Cost      money.Amount // paid on a buy, received on a sell; positive
	Vig       money.Amount
	Reasoning string
	Time      int64
}

// MarketChange is what a record does to one market.
type MarketChange struct {
	ID        uuid.UUID
	Prev      uint64      // the market's LSN before this record; 0 creates it
	Info      *MarketInfo // after-image of the descriptive and lifecycle fields
	Books     []Book      // after-images of the pricing states that changed
	Proposals []Proposal  // after-images of the oracle proposals that changed
	Votes     []Vote      // oracle votes appended
}

// MarketInfo is the after-image of a market's descriptive and lifecycle
// fields.
type MarketInfo struct {
	Title       string
	Description string
	Category    string
	Creator     uuid.UUID
	Alpha       float64
	Q0          money.Amount // initial q_yes = q_no, in micro-shares
	ClosesAt    int64        // Unix nanoseconds
	CreatedAt   int64
	Status      Status
	Outcome     Side // meaningful when Status is StatusResolved or StatusSettling
	ResolvedAt  int64
	// Step is the progress of a close, a settlement or an oracle
	// notification in bounded steps; the zero Step when none runs.
	Step Step
}

// Step is the durable progress of work over a market's holders done in
// bounded steps (docs/ARCHITECTURE.md, "Bounded steps"): a close, a
// settlement, the notifications of an oracle proposal or challenge. The
// holders are walked in ascending ID order, at most Config.StepAccounts of
// them per record, and Cursor is the last one done, so that a restart
// resumes after it.
type Step struct {
	Kind   Kind      // the kind of every record of the steps
	Cursor uuid.UUID // the last holder done; Nil before the first
	// Oracle is the proposal whose oracle_resolved notification each
	// holder gets with its payout; Nil when the admin settled.
	Oracle uuid.UUID
	// Pool is the vig pool of each currency's book, fixed when the
	// settlement starts: min(profit, vig accrued), never negative.
	Pool [money.NumCurrencies]money.Amount
	// Closed is the shares of each currency and side in the positions the
	// steps have closed so far: the winning side's is what they paid, so
	// that the invariant checker can hold paid plus held to what the
	// market owes in the middle of a settlement.
	Closed [money.NumCurrencies][NumSides]money.Amount
	// Note is the notification each holder gets in a walk that only
	// notifies (a close, an oracle proposal or challenge); zero in a
	// settlement.
	Note Note
}

// Book is one currency's LS-LMSR state and money in a market.
type Book struct {
	Currency   money.Currency
	Q          [NumSides]money.Amount // outstanding q per side, in micro-shares
	Subsidy    money.Amount           // C(q0) moved in from the house
	Collateral money.Amount           // what the market holds
	Volume     money.Amount           // sum of trade costs
	Splits     money.Amount           // shares per side created by splits minus merges
	VigTotal   money.Amount           // vig accrued, all beneficiaries
	VigCreator money.Amount           // of which the creator's
	VigHouse   money.Amount           // of which the house's
	Trades     uint64                 // number of trades
	// Seq is the book's state version, market_seq: it counts the changes
	// of Q, by trades, splits and merges (MarketSeq).
	Seq uint64
}

// SupplyChange is the after-image of the minted and burned totals.
type SupplyChange struct {
	Prev   uint64
	Minted [money.NumCurrencies]money.Amount
	Burned [money.NumCurrencies]money.Amount
}

// KeyChange is the after-image of one API key.
type KeyChange struct {
	Prev uint64
	Key  Key
	// Purged removes the key: the change carries its last image, and
	// nothing of it stays (format version 3).
	Purged bool
}

// Key is an API key as stored: its SHA-256 hash, never the key.
type Key struct {
	ID            uuid.UUID
	Account       uuid.UUID
	Name          string
	Hash          [32]byte
	Prefix        string // the first 17 characters of the key
	Scopes        Scopes
	Tier          Tier
	CreatedAt     int64
	ExpiresAt     int64 // 0: no expiry
	RevokedAt     int64 // 0: not revoked
	TotalRequests uint64
	LastUsedAt    int64
}

// SessionChange is the after-image of one session.
type SessionChange struct {
	Prev    uint64
	Session Session
	// Purged removes the session (format version 3).
	Purged bool
}

// Session is a browser session as stored: the SHA-256 of its token.
type Session struct {
	Hash      [32]byte
	Account   uuid.UUID
	CreatedAt int64
	ExpiresAt int64
	RevokedAt int64 // 0: not revoked
}

// Clone returns a deep copy of r, sharing only strings: for keeping a record
// that its producer will reuse (Capture's chunks, a journal's test double).
func (r *Record) Clone() *Record {
	c := *r
	c.Accounts = slices.Clone(r.Accounts)
	for i := range c.Accounts {
		a := &c.Accounts[i]
		if a.Info != nil {
			info := *a.Info
			info.PasswordHash = slices.Clone(info.PasswordHash)
			a.Info = &info
		}
		a.Balances = slices.Clone(a.Balances)
		a.Ledger = slices.Clone(a.Ledger)
		a.Positions = slices.Clone(a.Positions)
		a.Trades = slices.Clone(a.Trades)
		a.Notes = slices.Clone(a.Notes)
		a.NotesRead = slices.Clone(a.NotesRead)
		a.Vig = slices.Clone(a.Vig)
		a.Transfers = slices.Clone(a.Transfers)
		a.Idem = slices.Clone(a.Idem)
		a.TransferUpdates = slices.Clone(a.TransferUpdates)
	}
	c.Markets = slices.Clone(r.Markets)
	for i := range c.Markets {
		m := &c.Markets[i]
		if m.Info != nil {
			info := *m.Info
			m.Info = &info
		}
		m.Books = slices.Clone(m.Books)
		m.Proposals = slices.Clone(m.Proposals)
		m.Votes = slices.Clone(m.Votes)
	}
	if r.Supply != nil {
		s := *r.Supply
		c.Supply = &s
	}
	c.Keys = slices.Clone(r.Keys)
	c.Sessions = slices.Clone(r.Sessions)
	return &c
}
