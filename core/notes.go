package core

import (
	"github.com/google/uuid"

	"marketd/core/money"
	"marketd/internal/enum"
)

// MaxNotes is how many notifications an account keeps: past it, the oldest
// are dropped (docs/API.md, "GET /api/notifications").
const MaxNotes = 1000

// NoteKind is what a notification is about. Values are written to disk.
type NoteKind uint8

// The notification kinds.
const (
	NoteMarketSettled    NoteKind = 1
	NoteMarketClosed     NoteKind = 2
	NoteOracleProposed   NoteKind = 3
	NoteOracleChallenged NoteKind = 4
	NoteOracleResolved   NoteKind = 5
	NoteReferralApplied  NoteKind = 6
	NoteDepositCredited  NoteKind = 7
	NoteWithdrawalQueued NoteKind = 8
	// Wave 2: custody's manual mode (docs/API.md, "Custody").
	NoteDepositPending   NoteKind = 9
	NoteDepositRejected  NoteKind = 10
	NoteWithdrawalSent   NoteKind = 11
	NoteWithdrawalFailed NoteKind = 12
)

var noteKindNames = enum.New[NoteKind]("note_kind", []string{
	NoteMarketSettled:    "market_settled",
	NoteMarketClosed:     "market_closed",
	NoteOracleProposed:   "oracle_proposed",
	NoteOracleChallenged: "oracle_challenged",
	NoteOracleResolved:   "oracle_resolved",
	NoteReferralApplied:  "referral_applied",
	NoteDepositCredited:  "deposit_credited",
	NoteWithdrawalQueued: "withdrawal_queued",
	NoteDepositPending:   "deposit_pending",
	NoteDepositRejected:  "deposit_rejected",
	NoteWithdrawalSent:   "withdrawal_sent",
	NoteWithdrawalFailed: "withdrawal_failed",
})

// String returns the wire name of the kind.
func (k NoteKind) String() string { return noteKindNames.Name(k) }

// Valid reports whether k is a known kind.
func (k NoteKind) Valid() bool { return noteKindNames.Valid(k) }

// Note is one notification kept for an account. Which of the data fields
// mean something depends on Kind; the message shown is made from them when
// read, so that the log carries no text.
type Note struct {
	ID       uint64 // per account, from 1, in the order made
	Kind     NoteKind
	Read     bool
	Time     int64     // Unix nanoseconds
	Market   uuid.UUID // the market concerned, if any
	Ref      uuid.UUID // the proposal, transfer or other account concerned, if any
	Currency money.Currency
	Amount   money.Amount // a payout, deposit, withdrawal or bonus, if any
	Outcome  Side         // a settled or proposed outcome, if any
}

// applyNotes appends notes, dropping the oldest past MaxNotes, and marks
// the read ones. Caller holds a.mu.
func (a *account) applyNotes(notes []Note, read []uint64) {
	for _, n := range notes {
		m := a.editMore()
		if len(m.notes) == MaxNotes {
			// Move the window instead of the notes: append replaces the
			// array when it runs out of room, copying the kept notes once
			// every few hundred notes instead of for every one (a
			// settlement notifies every holder), and the array stays
			// within a small multiple of MaxNotes.
			m.notes = m.notes[1:]
		}
		m.notes = append(m.notes, n)
		a.lastNote = max(a.lastNote, n.ID)
	}
	for _, id := range read {
		if i, ok := a.noteIndex(id); ok {
			a.editMore().notes[i].Read = true
		}
	}
}

// noteIndex finds a kept notification by ID: IDs ascend, so it searches.
// Caller holds a.mu.
func (a *account) noteIndex(id uint64) (int, bool) {
	notes := a.notes()
	lo, hi := 0, len(notes)
	for lo < hi {
		mid := (lo + hi) / 2
		switch {
		case notes[mid].ID == id:
			return mid, true
		case notes[mid].ID < id:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return 0, false
}

// notify adds a notification for a to the account's change ch in the
// record being built, unless a turned notifications off. The account must
// be locked and ch must be its change.
func (p *pending) notify(a *account, ch *AccountChange, n Note) {
	if a.info.Settings.NotificationsOff || a.id == HouseID {
		return
	}
	n.ID = a.lastNote + uint64(len(ch.Notes)) + 1
	ch.Notes = append(ch.Notes, n)
}
