package core

import (
	"fmt"

	"github.com/google/uuid"
)

// ReserveAccounts makes room in the state's maps (by ID, by name, by
// referral code) for n accounts about to be loaded from a snapshot. Loading
// 1,000,000 accounts into maps grown one insert at a time spent 1 s of its
// 4 s of CPU moving entries as they grew. Maps that already hold entries
// are left alone.
func (s *State) ReserveAccounts(n int) {
	if n <= 0 {
		return
	}
	s.accounts.reserve(n)
	s.namesMu.Lock()
	if len(s.names) == 0 {
		s.names = make(map[nameKey]uuid.UUID, n)
	}
	s.namesMu.Unlock()
	s.idx.mu.Lock()
	if len(s.idx.codes) == 0 {
		s.idx.codes = make(map[codeKey]uuid.UUID, n) // every account has a code
	}
	s.idx.mu.Unlock()
}

// LoadImage adds the whole objects of a snapshot chunk to the state, each
// at the LSN the image gives. An object that is already there is an error:
// a snapshot holds each object once.
func (s *State) LoadImage(rec *Record) error {
	if err := s.loadObjects(rec); err != nil {
		return err
	}
	s.indexImage(rec)
	return nil
}

// loadObjects is LoadImage but for the accounts' names and lookups, which
// indexImage makes: nothing in it reads them.
func (s *State) loadObjects(rec *Record) error {
	if rec.Kind != KindImage {
		return fmt.Errorf("core: load image: record kind %d is not an image", rec.Kind)
	}
	for i := range rec.Accounts {
		ch := &rec.Accounts[i]
		if err := checkStorable(ch); err != nil {
			return fmt.Errorf("core: load image: %w", err)
		}
		a := s.account(ch.ID)
		if ch.Info == nil {
			// The rest of long lists, continuing the account's image.
			if a == nil || a.lsn != ch.Prev || len(ch.Balances)+len(ch.Notes)+len(ch.NotesRead) > 0 {
				return fmt.Errorf("core: load image: account %s continued without its image", ch.ID)
			}
			a.applyLocked(ch.Prev, ch, s.idemLimits)
			continue
		}
		switch {
		case a == nil:
			a = s.newAccount(ch.ID)
			a.applyLocked(ch.Prev, ch, s.idemLimits)
			s.accounts.store(a.id, a.ref) // and its name: indexImage
		case ch.ID == HouseID && a.lsn == 0 && a.ledgerEmpty():
			a.applyLocked(ch.Prev, ch, s.idemLimits) // the house exists from the start
		default:
			return fmt.Errorf("core: load image: account %s twice", ch.ID)
		}
	}
	for i := range rec.Markets {
		ch := &rec.Markets[i]
		if ch.Info == nil {
			// The rest of a long vote list, continuing the market's image.
			m := s.market(ch.ID)
			if m == nil || m.lsn != ch.Prev || len(ch.Books)+len(ch.Proposals) > 0 {
				return fmt.Errorf("core: load image: market %s continued without its image", ch.ID)
			}
			m.apply(ch.Prev, ch)
			s.markDirty(m)
			continue
		}
		if s.market(ch.ID) != nil {
			return fmt.Errorf("core: load image: market %s twice", ch.ID)
		}
		m := s.newMarket(ch.ID)
		m.apply(ch.Prev, ch)
		m.publish()
		s.addMarket(m)
		s.indexMarket(m.id, true, ch)
	}
	if sc := rec.Supply; sc != nil {
		s.supply.apply(sc.Prev, sc)
	}
	for _, kc := range rec.Keys {
		if s.auth.keys[kc.Key.ID] != nil || kc.Purged {
			return fmt.Errorf("core: load image: key %s twice or purged", kc.Key.ID)
		}
		s.auth.putKey(kc.Prev, kc.Key)
	}
	for _, sc := range rec.Sessions {
		if sc.Purged {
			return fmt.Errorf("core: load image: session %s purged", sessionName(sc.Session.Hash))
		}
		s.auth.putSession(sc.Prev, sc.Session)
	}
	return nil
}

// indexImage makes the names and lookups of the accounts of an image that
// loadObjects has loaded: by name every account it created (all but the
// house, the only account a state starts with), and the lookups of each
// account change. An account's image comes whole in its first change and
// continuations carry no Info, so the old info of every change is zero.
func (s *State) indexImage(rec *Record) {
	for i := range rec.Accounts {
		ch := &rec.Accounts[i]
		if ch.Info != nil && ch.ID != HouseID {
			s.namesMu.Lock()
			s.nameStore(ch.Info.Name, ch.ID)
			s.namesMu.Unlock()
		}
		s.indexAccount(ch.ID, nil, ch)
	}
}

// imagesQueued bounds the images an ImageLoader has loaded and not yet
// indexed.
const imagesQueued = 4

// ImageLoader loads the images of a snapshot into a state as LoadImage
// does, but makes the accounts' names and lookups (indexImage) on a
// goroutine of its own, in the images' order, while the caller loads the
// next images: inserting 1,000,000 names and referral codes into their
// maps, a cache miss each, was 0.9 s of a 1.4 s load (CPU profile of
// TestScaleTimeToReady). Nothing reads the names or lookups before Close
// returns, which waits for that goroutine.
type ImageLoader struct {
	s     *State
	queue chan *Record
	done  chan struct{}
}

// NewImageLoader starts loading images into s; the caller must Close it.
// release, when not nil, is called with each loaded image once the loader
// is done with it, in order, on the loader's goroutine: the state keeps
// none of an image's memory (its strings aside), so the caller may decode
// the next image into it.
func (s *State) NewImageLoader(release func(*Record)) *ImageLoader {
	l := &ImageLoader{s: s, queue: make(chan *Record, imagesQueued), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for rec := range l.queue {
			s.indexImage(rec)
			if release != nil {
				release(rec)
			}
		}
	}()
	return l
}

// Load is LoadImage. The loader keeps rec until it calls release with it,
// or until Close when release is nil: the caller must not change it
// before.
func (l *ImageLoader) Load(rec *Record) error {
	if err := l.s.loadObjects(rec); err != nil {
		return err
	}
	l.queue <- rec
	return nil
}

// Close waits until every loaded image is indexed. After an error of Load
// the state is incomplete and must be dropped.
func (l *ImageLoader) Close() {
	close(l.queue)
	<-l.done
}
