package record

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/google/uuid"

	"marketd/core"
)

// The encodings of the account's and market's extra lists: profiles,
// notifications, vig payments, transfers and oracle proposals. Layouts
// follow Append's rules.

// appendProfile appends the account info fields after the referrer:
// referral code, trading mode, wallet, persona, terms version and time,
// settings bits, theme.
func appendProfile(dst []byte, id uuid.UUID, in *core.AccountInfo) []byte {
	dst = appendString(dst, in.ReferralCode, "referral code")
	dst = appendCurrency(dst, in.Mode)
	dst = appendString(dst, in.Wallet, "wallet")
	dst = appendString(dst, in.Persona, "persona")
	dst = appendString(dst, in.TOSVersion, "terms version")
	dst = binary.AppendVarint(dst, in.TOSAcceptedAt)
	var bits byte
	if in.Settings.NotificationsOff {
		bits |= settingNotificationsOff
	}
	if in.Settings.HideFromLeaderboard {
		bits |= settingHideLeaderboard
	}
	dst = append(dst, bits)
	if !validTheme(in.Settings.Theme) {
		panic(fmt.Sprintf("BUG: record: encode record: account %s: unknown theme %d", id, in.Settings.Theme))
	}
	return append(dst, byte(in.Settings.Theme))
}

func appendNote(dst []byte, n *core.Note) []byte {
	dst = binary.AppendUvarint(dst, n.ID)
	if !n.Kind.Valid() {
		panic(fmt.Sprintf("BUG: record: encode record: note %d: unknown kind %d", n.ID, n.Kind))
	}
	dst = append(dst, byte(n.Kind))
	dst = appendBool(dst, n.Read)
	dst = binary.AppendVarint(dst, n.Time)
	dst = append(dst, n.Market[:]...)
	dst = append(dst, n.Ref[:]...)
	dst = appendCurrency(dst, n.Currency)
	dst = appendAmount(dst, n.Amount)
	return appendSide(dst, n.Outcome)
}

func appendVigPayment(dst []byte, v *core.VigPayment) []byte {
	dst = append(dst, v.Market[:]...)
	dst = appendCurrency(dst, v.Currency)
	if !v.Role.Valid() {
		panic(fmt.Sprintf("BUG: record: encode record: vig payment %s: unknown role %d", v.Market, v.Role))
	}
	dst = append(dst, byte(v.Role))
	dst = appendAmount(dst, v.Accrued)
	dst = appendAmount(dst, v.Paid)
	return binary.AppendVarint(dst, v.Time)
}

func appendTransfer(dst []byte, t *core.Transfer) []byte {
	dst = append(dst, t.ID[:]...)
	if !t.Kind.Valid() || !t.Status.Valid() {
		panic(fmt.Sprintf("BUG: record: encode record: transfer %s: unknown kind %d or status %d", t.ID, t.Kind, t.Status))
	}
	dst = append(dst, byte(t.Kind), byte(t.Status))
	dst = appendAmount(dst, t.Amount)
	dst = appendString(dst, t.TxHash, "transfer tx hash")
	dst = appendString(dst, t.Wallet, "transfer wallet")
	dst = binary.AppendVarint(dst, t.Time)
	// Format 3.
	dst = appendAmount(dst, t.Claimed)
	dst = appendString(dst, t.ChainTx, "transfer chain tx")
	dst = binary.AppendVarint(dst, t.ResolvedAt)
	return append(dst, t.ResolvedBy[:]...)
}

func appendProposal(dst []byte, p *core.Proposal) []byte {
	dst = append(dst, p.ID[:]...)
	dst = appendSide(dst, p.Outcome)
	if !p.Status.Valid() {
		panic(fmt.Sprintf("BUG: record: encode record: proposal %s: unknown status %d", p.ID, p.Status))
	}
	dst = append(dst, byte(p.Status))
	dst = append(dst, p.Proposer[:]...)
	dst = append(dst, p.Challenger[:]...)
	dst = appendAmount(dst, p.Bond)
	for s := range core.NumSides {
		dst = binary.AppendUvarint(dst, p.Votes[s])
	}
	dst = binary.AppendVarint(dst, p.ChallengeDeadline)
	dst = binary.AppendVarint(dst, p.VoteDeadline)
	dst = binary.AppendVarint(dst, p.CreatedAt)
	dst = binary.AppendVarint(dst, p.ResolvedAt)
	// Format 3.
	for s := range core.NumSides {
		dst = appendAmount(dst, p.Stakes[s])
	}
	dst = binary.AppendUvarint(dst, p.StakeCursor)
	return appendAmount(dst, p.StakesPaid)
}

func (d *decoder) profile(in *core.AccountInfo) {
	in.ReferralCode = d.string("referral code")
	in.Mode = d.currency()
	in.Wallet = d.string("wallet")
	in.Persona = d.string("persona")
	in.TOSVersion = d.string("terms version")
	in.TOSAcceptedAt = d.varint()
	bits := d.byte()
	if d.err == nil && bits&^settingBits != 0 {
		d.fail(fmt.Sprintf("unknown settings bits %#x", bits), 1)
	}
	in.Settings.NotificationsOff = bits&settingNotificationsOff != 0
	in.Settings.HideFromLeaderboard = bits&settingHideLeaderboard != 0
	in.Settings.Theme = core.Theme(d.byte())
	if d.err == nil && !validTheme(in.Settings.Theme) {
		d.fail(fmt.Sprintf("unknown theme %d", in.Settings.Theme), 1)
	}
}

// accountExtras decodes the lists that follow an account change's trades.
func (d *decoder) accountExtras(a *core.AccountChange, blk **accountBlock) {
	// A trade's account change has none of them: Append writes their zero
	// counts at once (six in format 3, four before), read here at once too.
	if d.zeros(d.since3(6, 4)) {
		return
	}
	if n := d.count(minNoteBytes, "notes"); n > 0 {
		a.Notes = make([]core.Note, n)
		for i := range a.Notes {
			d.note(&a.Notes[i])
		}
	}
	if n := d.count(minNoteReadBytes, "notes read"); n > 0 {
		a.NotesRead = make([]uint64, n)
		for i := range a.NotesRead {
			a.NotesRead[i] = d.uvarint()
		}
	}
	if n := d.count(minVigPaymentBytes, "vig payments"); n > 0 {
		a.Vig = make([]core.VigPayment, n)
		for i := range a.Vig {
			v := &a.Vig[i]
			v.Market = d.uuid()
			v.Currency = d.currency()
			v.Role = core.VigRole(d.byte())
			if d.err == nil && !v.Role.Valid() {
				d.fail(fmt.Sprintf("unknown vig role %d", v.Role), 1)
			}
			v.Accrued = d.amount()
			v.Paid = d.amount()
			v.Time = d.varint()
		}
	}
	if n := d.count(d.since3(minTransferBytes, minTransferBytesV2), "transfers"); n > 0 {
		a.Transfers = make([]core.Transfer, n)
		for i := range a.Transfers {
			d.transfer(&a.Transfers[i])
		}
	}
	if d.version < 3 {
		return
	}
	if n := d.count(minIdemEntryBytes, "idempotency entries"); n > 0 {
		a.Idem = d.block(blk).idem[:]
		if n > 1 {
			a.Idem = make([]core.IdemEntry, n)
		}
		for i := range a.Idem {
			d.idemEntry(&a.Idem[i])
		}
	}
	if n := d.count(minTransferBytes, "transfer updates"); n > 0 {
		a.TransferUpdates = make([]core.Transfer, n)
		for i := range a.TransferUpdates {
			d.transfer(&a.TransferUpdates[i])
		}
	}
}

// since3 returns v3 for a payload of format 3 or later, v2 for one of
// format 2: the smallest size of an item format 3 extended.
func (d *decoder) since3(v3, v2 int) int {
	if d.version >= 3 {
		return v3
	}
	return v2
}

// appendIdemEntry encodes a stored answer of an idempotent request.
func appendIdemEntry(dst []byte, e *core.IdemEntry) []byte {
	if len(e.Key) == 0 || len(e.Key) > core.MaxIdempotencyKeyBytes || len(e.Answer) > core.MaxIdemAnswerBytes {
		panic(fmt.Sprintf("BUG: record: encode record: idempotency key of %d bytes, answer of %d", len(e.Key), len(e.Answer)))
	}
	dst = appendString(dst, e.Key, "idempotency key")
	dst = binary.AppendUvarint(dst, uint64(e.Index))
	dst = append(dst, e.Fingerprint[:]...)
	dst = binary.AppendVarint(dst, e.Time)
	dst = binary.AppendUvarint(dst, uint64(e.Status))
	return appendBytes(dst, e.Answer, "idempotent answer")
}

// idemEntry decodes a stored answer. The key and the answer share one
// allocation, the key a string viewing its first bytes: replay of a log of
// keyed trades spent two allocations per record on them
// (docs/PERFORMANCE.md). Nothing writes to the answer's bytes
// (core.IdemEntry), so the key cannot change under its string.
func (d *decoder) idemEntry(e *core.IdemEntry) {
	start := d.off
	kn := d.length("idempotency key")
	keyAt := d.off
	d.off += kn
	if d.err == nil && (kn == 0 || kn > core.MaxIdempotencyKeyBytes) {
		d.fail(fmt.Sprintf("idempotency key of %d bytes", kn), d.off-start)
	}
	idx := d.uvarint()
	if d.err == nil && idx > math.MaxUint32 {
		d.fail(fmt.Sprintf("idempotency index %d", idx), 1)
	}
	e.Index = uint32(idx)
	e.Fingerprint = d.hash()
	e.Time = d.varint()
	status := d.uvarint()
	if d.err == nil && status > math.MaxUint16 {
		d.fail(fmt.Sprintf("idempotent status %d", status), 1)
	}
	e.Status = uint16(status)
	start = d.off
	an := d.length("idempotent answer")
	if d.err == nil && an > core.MaxIdemAnswerBytes {
		d.fail(fmt.Sprintf("idempotent answer of %d bytes", an), d.off-start)
	}
	if d.err != nil {
		return
	}
	buf := make([]byte, kn+an)
	copy(buf, d.b[keyAt:keyAt+kn])
	copy(buf[kn:], d.b[d.off:d.off+an])
	d.off += an
	e.Key = unsafe.String(unsafe.SliceData(buf), kn)
	if an > 0 {
		e.Answer = buf[kn : kn+an : kn+an]
	}
}

func (d *decoder) note(n *core.Note) {
	n.ID = d.uvarint()
	n.Kind = core.NoteKind(d.byte())
	if d.err == nil && !n.Kind.Valid() {
		d.fail(fmt.Sprintf("unknown note kind %d", n.Kind), 1)
	}
	n.Read = d.flag("note read")
	n.Time = d.varint()
	n.Market = d.uuid()
	n.Ref = d.uuid()
	n.Currency = d.currency()
	n.Amount = d.amount()
	n.Outcome = d.side()
}

func (d *decoder) transfer(t *core.Transfer) {
	t.ID = d.uuid()
	t.Kind = core.TransferKind(d.byte())
	if d.err == nil && !t.Kind.Valid() {
		d.fail(fmt.Sprintf("unknown transfer kind %d", t.Kind), 1)
	}
	t.Status = core.TransferStatus(d.byte())
	if d.err == nil && !t.Status.Valid() {
		d.fail(fmt.Sprintf("unknown transfer status %d", t.Status), 1)
	}
	t.Amount = d.amount()
	t.TxHash = d.string("transfer tx hash")
	t.Wallet = d.string("transfer wallet")
	t.Time = d.varint()
	if d.version >= 3 {
		t.Claimed = d.amount()
		t.ChainTx = d.string("transfer chain tx")
		t.ResolvedAt = d.varint()
		t.ResolvedBy = d.uuid()
	}
}

// marketExtras decodes the lists that follow a market change's books.
func (d *decoder) marketExtras(m *core.MarketChange) {
	if d.zeros(2) { // no proposal or vote: a trade's market change
		return
	}
	if n := d.count(d.since3(minProposalBytes, minProposalBytesV2), "proposals"); n > 0 {
		m.Proposals = make([]core.Proposal, n)
		for i := range m.Proposals {
			d.proposal(&m.Proposals[i])
		}
	}
	if n := d.count(d.since3(minVoteBytes, minVoteBytesV2), "votes"); n > 0 {
		m.Votes = make([]core.Vote, n)
		for i := range m.Votes {
			v := &m.Votes[i]
			v.Proposal = d.uuid()
			v.Account = d.uuid()
			v.Outcome = d.side()
			v.Time = d.varint()
			if d.version >= 3 {
				v.Stake = d.amount()
			}
		}
	}
}

func (d *decoder) proposal(p *core.Proposal) {
	p.ID = d.uuid()
	p.Outcome = d.side()
	p.Status = core.ProposalStatus(d.byte())
	if d.err == nil && !p.Status.Valid() {
		d.fail(fmt.Sprintf("unknown proposal status %d", p.Status), 1)
	}
	p.Proposer = d.uuid()
	p.Challenger = d.uuid()
	p.Bond = d.amount()
	for s := range core.NumSides {
		p.Votes[s] = d.uvarint()
	}
	p.ChallengeDeadline = d.varint()
	p.VoteDeadline = d.varint()
	p.CreatedAt = d.varint()
	p.ResolvedAt = d.varint()
	if d.version >= 3 {
		for s := range core.NumSides {
			p.Stakes[s] = d.amount()
		}
		p.StakeCursor = d.uvarint()
		p.StakesPaid = d.amount()
	}
}
