package record

import "strings"

// stringsChunkBytes is the size of the blocks Strings copies strings into.
const stringsChunkBytes = 4 << 10

// Strings is memory the strings of decoded records are copied into, a
// block of a few KiB at a time: a replayed trade's one string (its
// reasoning) was an allocation of its own per record. A string keeps its
// whole block alive, so a Strings serves the records of one replay chunk
// (a few hundred) and is then dropped, not reused: its strings are the
// caller's to keep. The zero Strings is ready.
type Strings struct {
	b strings.Builder // only ever appended to: a string taken from it never changes
}

// copy returns p as a string in s's current block, or in a new block when
// it does not fit; a string of more than a quarter block gets memory of
// its own.
func (s *Strings) copy(p []byte) string {
	if s.b.Cap()-s.b.Len() < len(p) {
		if len(p) > stringsChunkBytes/4 {
			return string(p)
		}
		s.b = strings.Builder{}
		s.b.Grow(stringsChunkBytes)
	}
	start := s.b.Len()
	s.b.Write(p)
	return s.b.String()[start:]
}
