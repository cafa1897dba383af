package record

import (
	"fmt"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
)

// The market's Step (format version 3), at the end of its info: a presence
// byte, then the kind, the cursor, the oracle proposal, the vig pools, the
// closed shares and the note (a presence byte and a note). The zero Step is absent, so that a market not in the
// middle of a close or settlement pays one byte for it; a present Step
// that is zero is rejected, keeping the encoding canonical.

func appendStep(dst []byte, market uuid.UUID, s *core.Step) []byte {
	if *s == (core.Step{}) {
		return append(dst, flagAbsent)
	}
	if s.Kind != 0 && !validKind(s.Kind) {
		panic(fmt.Sprintf("BUG: record: encode record: market %s: step of unknown kind %d", market, s.Kind))
	}
	dst = append(dst, flagPresent, byte(s.Kind))
	dst = append(dst, s.Cursor[:]...)
	dst = append(dst, s.Oracle[:]...)
	for c := range money.NumCurrencies {
		dst = appendAmount(dst, s.Pool[c])
	}
	for c := range money.NumCurrencies {
		for side := range core.NumSides {
			dst = appendAmount(dst, s.Closed[c][side])
		}
	}
	if s.Note == (core.Note{}) {
		return append(dst, flagAbsent)
	}
	return appendNote(append(dst, flagPresent), &s.Note)
}

func (d *decoder) step(s *core.Step) {
	if !d.flag("market step") {
		return
	}
	s.Kind = core.Kind(d.byte())
	if d.err == nil && s.Kind != 0 && !validKind(s.Kind) {
		d.fail(fmt.Sprintf("step of unknown kind %d", s.Kind), 1)
	}
	s.Cursor = d.uuid()
	s.Oracle = d.uuid()
	for c := range money.NumCurrencies {
		s.Pool[c] = d.amount()
	}
	for c := range money.NumCurrencies {
		for side := range core.NumSides {
			s.Closed[c][side] = d.amount()
		}
	}
	if d.flag("market step note") {
		d.note(&s.Note)
		if d.err == nil && s.Note == (core.Note{}) {
			d.fail("zero market step note present", 1)
		}
	}
	if d.err == nil && *s == (core.Step{}) {
		d.fail("zero market step present", 1)
	}
}
