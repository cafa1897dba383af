package core

import (
	"fmt"

	"github.com/google/uuid"
)

// Apply replays one record from the log onto the state. It applies each
// object's after-image only where the object has not seen the record yet
// (its LSN is below seq), and refuses with ErrCorruptReplay when the object's
// LSN is not the Prev the record names: a gap or a reordering in the log.
// Nothing is applied when it refuses. Apply is for recovery, before an
// Engine owns the state; it keeps nothing of rec but its strings and byte
// slices, so a caller may reuse the rest of the record's memory.
func (s *State) Apply(seq uint64, rec *Record) error { return s.ApplyPrepared(seq, rec, nil) }

// Prepared is what Prepare found of a record's objects, for ApplyPrepared.
// The zero Prepared found nothing; one is reused from record to record.
type Prepared struct {
	accts []*account // by index in Record.Accounts; nil: not found
	mkts  []*market  // by index in Record.Markets
}

// Prepare looks up the accounts and markets rec changes, for
// ApplyPrepared. Unlike Apply it may run on any goroutine, while the
// recovering goroutine applies earlier records: replay's decoding workers
// call it, taking the lookups (a cache miss each in maps of 1,000,000
// accounts, 0.4 us of the 1.45 us Apply took per record in
// TestScaleTimeToReady's CPU profile) off the goroutine that applies.
// Objects are never removed from the state, so one found is the one Apply
// would find; one not found may be created by an earlier record not
// applied yet, and ApplyPrepared looks it up again. Prepare reads nothing
// of the objects themselves, only the maps that find them: a read of an
// account here, on the other core, took its cache line from the goroutine
// about to apply to it.
func (s *State) Prepare(rec *Record, p *Prepared) {
	p.accts = p.accts[:0]
	for i := range rec.Accounts {
		p.accts = append(p.accts, s.account(rec.Accounts[i].ID))
	}
	p.mkts = p.mkts[:0]
	for i := range rec.Markets {
		p.mkts = append(p.mkts, s.market(rec.Markets[i].ID))
	}
}

// ApplyPrepared is Apply, with the objects p found (nil: none) for rec.
func (s *State) ApplyPrepared(seq uint64, rec *Record, p *Prepared) error {
	if rec.Kind == KindImage {
		return fmt.Errorf("%w: record %d is a snapshot image", ErrCorruptReplay, seq)
	}
	if p != nil && (len(p.accts) != len(rec.Accounts) || len(p.mkts) != len(rec.Markets)) {
		panic(fmt.Sprintf("BUG: core: record %d prepared for %d accounts and %d markets, has %d and %d",
			seq, len(p.accts), len(p.mkts), len(rec.Accounts), len(rec.Markets)))
	}
	// Look every object up once; nil stands for one the record creates.
	var foundAccts []*account
	var foundMkts []*market
	if p != nil {
		foundAccts, foundMkts = p.accts, p.mkts
	}
	accts := s.replayAccts[:0]
	for i := range rec.Accounts {
		accts = append(accts, foundOr(foundAccts, i, rec.Accounts[i].ID, s.account))
	}
	mkts := s.replayMkts[:0]
	for i := range rec.Markets {
		mkts = append(mkts, foundOr(foundMkts, i, rec.Markets[i].ID, s.market))
	}
	s.replayAccts, s.replayMkts = accts, mkts
	if err := s.checkFollows(seq, rec, accts, mkts); err != nil {
		return err
	}
	s.applyRecord(seq, rec, accts, mkts)
	return nil
}

// foundOr returns found[i], what Prepare found, or when it found nothing
// (or did not run) what look finds now.
func foundOr[T any](found []*T, i int, id uuid.UUID, look func(uuid.UUID) *T) *T {
	if i < len(found) && found[i] != nil {
		return found[i]
	}
	return look(id)
}

// follows reports whether a record may change an object at lsn: the
// object already includes it (lsn >= seq: replay skips it) or is at the
// LSN the record follows. The caller names the object in the error only
// when it fails: boxing an ID for every call cost two allocations per
// replayed record.
func follows(lsn, prev, seq uint64) bool { return lsn >= seq || lsn == prev }

// checkStorable refuses an account change that the account's state
// cannot hold, which would be a BUG panic when applied: a position in the
// nil market (no market has that ID, and an account's position table
// marks an empty slot with it: positionTable.put), or a trade that does
// not fit a fill (fillable). Recovery checks what it read before applying
// it.
func checkStorable(ch *AccountChange) error {
	for i := range ch.Positions {
		if ch.Positions[i].Market == uuid.Nil {
			return fmt.Errorf("account %s: position in the nil market", ch.ID)
		}
	}
	for i := range ch.Trades {
		if err := fillable(&ch.Trades[i]); err != nil {
			return fmt.Errorf("account %s: %w", ch.ID, err)
		}
	}
	return nil
}

func notFollowing(what string, id fmt.Stringer, lsn, prev, seq uint64) error {
	return fmt.Errorf("%w: record %d changes %s %s at LSN %d, but it is at %d",
		ErrCorruptReplay, seq, what, id, prev, lsn)
}

func (s *State) checkFollows(seq uint64, rec *Record, accts []*account, mkts []*market) error {
	for i := range rec.Accounts {
		ch := &rec.Accounts[i]
		if err := checkStorable(ch); err != nil {
			return fmt.Errorf("%w: record %d: %w", ErrCorruptReplay, seq, err)
		}
		if a := accts[i]; a != nil {
			if !follows(a.lsn, ch.Prev, seq) {
				return notFollowing("account", ch.ID, a.lsn, ch.Prev, seq)
			}
			if a.lsn < seq && !a.hasTransfers(ch.TransferUpdates) {
				return fmt.Errorf("%w: record %d updates a transfer account %s does not have", ErrCorruptReplay, seq, ch.ID)
			}
		} else if ch.Prev != 0 || ch.Info == nil || len(ch.TransferUpdates) > 0 {
			return fmt.Errorf("%w: record %d changes unknown account %s", ErrCorruptReplay, seq, ch.ID)
		}
	}
	for i := range rec.Markets {
		ch := &rec.Markets[i]
		if m := mkts[i]; m != nil {
			if !follows(m.lsn, ch.Prev, seq) {
				return notFollowing("market", ch.ID, m.lsn, ch.Prev, seq)
			}
		} else if ch.Prev != 0 || ch.Info == nil {
			return fmt.Errorf("%w: record %d changes unknown market %s", ErrCorruptReplay, seq, ch.ID)
		}
	}
	if sc := rec.Supply; sc != nil && !follows(s.supply.lsn, sc.Prev, seq) {
		return notFollowing("supply", supplyName{}, s.supply.lsn, sc.Prev, seq)
	}
	for i := range rec.Keys {
		kc := &rec.Keys[i]
		var lsn uint64
		if e := s.auth.keys[kc.Key.ID]; e != nil {
			lsn = e.lsn
		} else if kc.Purged {
			continue // gone already: purged before a snapshot replayed into
		}
		if !follows(lsn, kc.Prev, seq) {
			return notFollowing("key", kc.Key.ID, lsn, kc.Prev, seq)
		}
	}
	for i := range rec.Sessions {
		sc := &rec.Sessions[i]
		var lsn uint64
		if e := s.auth.sessions[sc.Session.Hash]; e != nil {
			lsn = e.lsn
		} else if sc.Purged {
			continue
		}
		if !follows(lsn, sc.Prev, seq) {
			return notFollowing("session", sessionName(sc.Session.Hash), lsn, sc.Prev, seq)
		}
	}
	return nil
}

// supplyName and sessionName name objects in replay errors.
type supplyName struct{}

// String names the supply.
func (supplyName) String() string { return "totals" }

type sessionName [32]byte

// String names a session by the start of its hash.
func (h sessionName) String() string { return fmt.Sprintf("%x", h[:4]) }

// applyRecord applies a checked record during replay, to the objects Apply
// looked up (nil: created here). The apply code is the one the live path
// runs (applyLocked), but without the account locks, as loading a
// snapshot's images does: no other goroutine reads or changes an account
// before recovery hands the state over (Prepare, on replay's workers, reads
// only the maps that find accounts), and taking and releasing a lock was a
// tenth of the replaying goroutine's CPU (profile of BenchmarkRecover).
// Market views are published once replay is over.
func (s *State) applyRecord(seq uint64, rec *Record, accts []*account, mkts []*market) {
	for i := range rec.Accounts {
		ch := &rec.Accounts[i]
		a := accts[i]
		if a == nil {
			a = s.newAccount(ch.ID)
			a.applyLocked(seq, ch, s.idemLimits)
			s.addAccount(a)
			s.indexAccount(a.id, nil, ch)
			continue
		}
		if a.lsn < seq {
			// The info before the change matters to the lookups only when
			// the change has one: a trade's has not, and spares the copy,
			// as the live path does (record_build.go).
			var old *AccountInfo
			if ch.Info != nil {
				info := a.infoOf()
				old = &info
			}
			a.applyLocked(seq, ch, s.idemLimits)
			s.indexAccount(a.id, old, ch)
		}
	}
	for i := range rec.Markets {
		ch := &rec.Markets[i]
		m := mkts[i]
		if m == nil {
			m = s.newMarket(ch.ID)
			m.apply(seq, ch)
			m.publish()
			s.addMarket(m)
			s.indexMarket(m.id, true, ch)
			continue
		}
		if m.lsn < seq {
			m.applyChange(seq, ch) // lag.applied: when publishDirty publishes
			s.markDirty(m)
			s.indexMarket(m.id, false, ch)
		}
	}
	if sc := rec.Supply; sc != nil && s.supply.lsn < seq {
		s.supply.apply(seq, sc)
	}
	if len(rec.Keys)+len(rec.Sessions) == 0 {
		return
	}
	s.auth.mu.Lock()
	for _, kc := range rec.Keys {
		switch e := s.auth.keys[kc.Key.ID]; {
		case kc.Purged:
			if e != nil && e.lsn < seq {
				s.auth.removeKey(kc.Key.ID)
			}
		case e == nil || e.lsn < seq:
			s.auth.putKey(seq, kc.Key)
		}
	}
	for _, sc := range rec.Sessions {
		switch e := s.auth.sessions[sc.Session.Hash]; {
		case sc.Purged:
			if e != nil && e.lsn < seq {
				delete(s.auth.sessions, sc.Session.Hash)
			}
		case e == nil || e.lsn < seq:
			s.auth.putSession(seq, sc.Session)
		}
	}
	s.auth.mu.Unlock()
}

// apply sets the totals from an after-image. Caller holds sp.mu, or owns
// the state alone (recovery).
func (sp *supply) apply(seq uint64, sc *SupplyChange) {
	sp.minted = sc.Minted
	sp.burned = sc.Burned
	sp.lsn = seq
}
