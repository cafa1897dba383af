package core

import (
	"context"

	"github.com/google/uuid"
)

// NotesPage is a page of an account's notifications.
type NotesPage struct {
	Notes   []Note // newest first
	Matched int    // notifications that matched the filter, before the limit
	Unread  int    // unread notifications kept
}

// Notes returns an account's notifications, newest first, only unread ones
// when unreadOnly, at most limit.
func (e *Engine) Notes(id uuid.UUID, unreadOnly bool, limit int) (NotesPage, bool) {
	a := e.st.account(id)
	if a == nil {
		return NotesPage{}, false
	}
	var pg NotesPage
	a.mu.Lock()
	defer a.mu.Unlock()
	notes := a.notes()
	for i := len(notes) - 1; i >= 0; i-- {
		n := notes[i]
		if !n.Read {
			pg.Unread++
		}
		if unreadOnly && n.Read {
			continue
		}
		pg.Matched++
		if len(pg.Notes) < limit {
			pg.Notes = append(pg.Notes, n)
		}
	}
	return pg, true
}

// MaxNoteIDs bounds the IDs one MarkNotesRead names.
const MaxNoteIDs = MaxNotes

// MarkNotesRead marks an account's notifications read: those of ids, or
// every one when all. IDs not kept (never made, or dropped past MaxNotes)
// are skipped. It returns how many changed from unread to read; when none
// did, nothing is logged.
func (e *Engine) MarkNotesRead(ctx context.Context, id uuid.UUID, ids []uint64, all bool) (int, error) {
	if !all && len(ids) == 0 {
		return 0, fieldErr("ids", "must not be empty")
	}
	if len(ids) > MaxNoteIDs {
		return 0, fieldErr("ids", "at most %d", MaxNoteIDs)
	}
	if err := e.enter(); err != nil {
		return 0, err
	}
	defer e.leave()
	a := e.st.account(id)
	if a == nil {
		return 0, ErrAccountNotFound
	}
	a.mu.Lock()
	var unread []uint64
	if all {
		for _, n := range a.notes() {
			if !n.Read {
				unread = append(unread, n.ID)
			}
		}
	} else {
		seen := make(map[uint64]bool, len(ids))
		for _, nid := range ids {
			if i, ok := a.noteIndex(nid); ok && !a.notes()[i].Read && !seen[nid] {
				seen[nid] = true
				unread = append(unread, nid)
			}
		}
	}
	if len(unread) == 0 {
		// The answer rests on the notes as they are: wait until durable.
		lsn := a.lsn
		a.mu.Unlock()
		return 0, e.refuse(ctx, lsn, nil)
	}
	p := &pending{}
	p.rec = Record{Kind: KindNotesRead, Time: e.now()}
	p.addAccount(a).NotesRead = unread
	p.answer(ctx, len(unread))
	done := make(chan error, 1)
	e.commit(p, done, nil)
	a.mu.Unlock()
	if err := <-done; err != nil {
		return 0, err
	}
	return len(unread), nil
}
