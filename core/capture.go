package core

import (
	"bytes"
	"fmt"
	"math"
	"slices"
)

// Capture walks the whole state while the engine keeps trading and hands it
// to visit as image records (Kind KindImage) of at most chunk objects each;
// visit must not retain a record or anything in it after it returns: the
// next chunk reuses the memory. Each object is copied
// under its own lock, so trading waits at most for the copy of one account.
//
// The images are not one consistent cut: each object is taken at its own
// LSN. It is made consistent by replay: a snapshot taken this way must be
// loaded and then replayed from a sequence number at or below every record
// that was not yet handed to the journal when Capture began (the journal's
// durable position then is such a number), up to at least the returned
// maxLSN, the highest LSN of any captured object.
func (s *State) Capture(chunk int, visit func(*Record) error) (maxLSN uint64, err error) {
	s.publishDirty()
	chunk = max(chunk, 1)
	rec := &Record{Kind: KindImage}
	flush := func() error {
		if len(rec.Accounts)+len(rec.Markets)+len(rec.Keys)+len(rec.Sessions) == 0 && rec.Supply == nil {
			return nil
		}
		err := visit(rec)
		*rec = Record{Kind: KindImage, Accounts: rec.Accounts[:0], Markets: rec.Markets[:0]}
		return err
	}
	see := func(lsn uint64) { maxLSN = max(maxLSN, lsn) }

	s.supply.mu.Lock()
	rec.Supply = &SupplyChange{Prev: s.supply.lsn, Minted: s.supply.minted, Burned: s.supply.burned}
	s.supply.mu.Unlock()
	see(rec.Supply.Prev)

	s.rangeMarkets(func(m *market) bool {
		v := m.view.Load()
		see(v.LSN)
		rec.Markets = append(rec.Markets, v.image())
		if len(rec.Markets) >= chunk {
			err = flush()
		}
		return err == nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return 0, err
	}

	s.auth.mu.RLock()
	for _, ent := range s.auth.keys {
		rec.Keys = append(rec.Keys, KeyChange{Prev: ent.lsn, Key: ent.key})
		see(ent.lsn)
	}
	for _, ent := range s.auth.sessions {
		rec.Sessions = append(rec.Sessions, SessionChange{Prev: ent.lsn, Session: ent.session})
		see(ent.lsn)
	}
	s.auth.mu.RUnlock()
	if err := flush(); err != nil {
		return 0, err
	}

	var bufs imageBuffers
	s.rangeAccounts(func(a *account) bool {
		a.mu.Lock()
		ch, ledger := a.imageLocked(&bufs)
		a.mu.Unlock()
		see(ch.Prev)
		bufs.addLedger(&ch, ledger)
		sortPositions(ch.Positions)
		rec.Accounts = append(rec.Accounts, ch)
		if len(rec.Accounts) >= chunk {
			err = flush()
			bufs.reset()
		}
		return err == nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return 0, err
	}
	return maxLSN, nil
}

// Canonical returns the whole state as one image record in a fixed order
// (objects sorted by ID, positions by market and currency), so that two
// states can be compared for equality: after a recovery, against the state
// at the boundary it recovered to. It reads a quiescent state.
func (s *State) Canonical() *Record {
	rec := &Record{Kind: KindImage}
	// One chunk holds everything, so no memory is reused under what is kept.
	_, err := s.Capture(math.MaxInt, func(r *Record) error {
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
	slices.SortFunc(rec.Accounts, func(a, b AccountChange) int { return compareIDs(a.ID, b.ID) })
	slices.SortFunc(rec.Markets, func(a, b MarketChange) int { return compareIDs(a.ID, b.ID) })
	slices.SortFunc(rec.Keys, func(a, b KeyChange) int { return compareIDs(a.Key.ID, b.Key.ID) })
	slices.SortFunc(rec.Sessions, func(a, b SessionChange) int { return bytes.Compare(a.Session.Hash[:], b.Session.Hash[:]) })
	return rec
}
