package strictjson

import (
	"unicode/utf8"
)

// Member is one member of a flat JSON object read by ScanFlat: a name and a
// string or number value, both as written in the body.
type Member struct {
	// Name is the member's name without its quotes; ScanFlat took only
	// names without escapes, so these are its bytes.
	Name string
	// Value is a string's content without its quotes (no escapes), or a
	// number's literal.
	Value string
	// Number tells a number from a string.
	Number bool
}

// Num returns a number member's value as Decode would store it in a
// Number: the literal as written.
func (m *Member) Num() Number { return Number{lit: m.Value} }

// ScanFlat reads body when it is one JSON object whose members are all
// strings without escapes or numbers, as Decode reads it: it appends the
// members to dst in body order and returns them with ok. It is the fast
// path of a handler whose body is that simple in the usual case (a trade's,
// about 0.7 µs and 4 allocations through Decode's reflection; see
// docs/PERFORMANCE.md, "Transport: CPU per trade request"): it decides
// nothing but the grammar, and gives up (ok false) on anything else, which
// the caller then hands to Decode for its answer, so that every refusal
// and every unusual body (escapes, null, true, false, arrays, nested
// objects, trailing data, invalid UTF-8, more than cap(dst) members, a
// body over MaxBodyBytes) is Decode's alone. Names are not checked:
// duplicate and unknown names are the caller's to find, and give up on.
// ScanFlat does not allocate; the members' strings are body's.
func ScanFlat(body string, dst []Member) (members []Member, ok bool) {
	if len(body) > MaxBodyBytes {
		return dst, false
	}
	members, end, ok := scanObject(body, skipSpace(body, 0), dst)
	return members, ok && skipSpace(body, end) == len(body)
}

// ScanFlatArray reads body when it is one JSON object whose only member is
// named name and is an array of objects that ScanFlat would take, each of
// at most cap(buf) members: it calls item with each object's members, in
// order (in buf, valid until item returns), and returns true. It gives up
// (false) on any other body, as ScanFlat does, and as soon as item returns
// false; the caller then hands the body to Decode. It does not allocate.
func ScanFlatArray(body, name string, buf []Member, item func(members []Member) bool) bool {
	if len(body) > MaxBodyBytes {
		return false
	}
	i := skipSpace(body, 0)
	if i == len(body) || body[i] != '{' {
		return false
	}
	key, i, ok := scanString(body, skipSpace(body, i+1))
	if !ok || key != name {
		return false
	}
	if i = skipSpace(body, i); i == len(body) || body[i] != ':' {
		return false
	}
	if i = skipSpace(body, i+1); i == len(body) || body[i] != '[' {
		return false
	}
	if i = skipSpace(body, i+1); i < len(body) && body[i] == ']' {
		i++
	} else {
		for {
			var members []Member
			if members, i, ok = scanObject(body, i, buf[:0]); !ok || !item(members) {
				return false
			}
			if i = skipSpace(body, i); i == len(body) {
				return false
			}
			if body[i] == ']' {
				i++
				break
			}
			if body[i] != ',' {
				return false
			}
			i = skipSpace(body, i+1)
		}
	}
	if i = skipSpace(body, i); i == len(body) || body[i] != '}' {
		return false
	}
	return skipSpace(body, i+1) == len(body)
}

// scanObject reads the flat object at body[i] (ScanFlat's), appending its
// members to dst, and returns them and the index after its closing brace.
func scanObject(body string, i int, dst []Member) (members []Member, next int, ok bool) {
	if i == len(body) || body[i] != '{' {
		return dst, i, false
	}
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		return dst, i + 1, true
	}
	for {
		if len(dst) == cap(dst) {
			return dst, i, false
		}
		var m Member
		if m.Name, i, ok = scanString(body, i); !ok {
			return dst, i, false
		}
		if i = skipSpace(body, i); i == len(body) || body[i] != ':' {
			return dst, i, false
		}
		if i = skipSpace(body, i+1); i == len(body) {
			return dst, i, false
		}
		if c := body[i]; c == '"' {
			m.Value, i, ok = scanString(body, i)
		} else {
			m.Number = true
			m.Value, i, ok = scanNumber(body, i)
		}
		if !ok {
			return dst, i, false
		}
		dst = append(dst, m)
		if i = skipSpace(body, i); i == len(body) {
			return dst, i, false
		}
		switch body[i] {
		case ',':
			i = skipSpace(body, i+1)
		case '}':
			return dst, i + 1, true
		default:
			return dst, i, false
		}
	}
}

// scanString reads the JSON string at body[i], which must have no escape,
// no control character and valid UTF-8 (RFC 8259, section 7), and returns
// its content and the index after its closing quote. One pass, one table
// lookup a byte (stringByte): a byte-by-byte loop of four comparisons a
// byte was about 1,100 of the 27,000 instructions of a trade request
// (docs/PERFORMANCE.md, "The HTTP path's own CPU per trade request"), and
// two strings.IndexByte searches (the quote, a backslash) and a loop for
// controls after them about 1,200 of 25,000 ("The trade request's handler,
// instruction by instruction"): a trade body's strings are 3 to 36 bytes,
// too short for the vector search to pay for its calls. A backslash
// before the first quote means an escape, perhaps of that quote: Decode's
// either way.
func scanString(body string, i int) (s string, next int, ok bool) {
	if i == len(body) || body[i] != '"' {
		return "", i, false
	}
	ascii := true
	for j := i + 1; j < len(body); j++ {
		switch stringByte[body[j]] {
		case plain:
		case quote:
			s = body[i+1 : j]
			return s, j + 1, ascii || utf8.ValidString(s)
		case nonASCII:
			ascii = false
		default: // a backslash or a control character
			return "", i, false
		}
	}
	return "", len(body), false
}

// The kinds of byte inside a JSON string, for scanString.
const (
	plain = iota
	quote
	nonASCII
	refused // a backslash (an escape: Decode's) or a control character
)

// stringByte is each byte's kind inside a JSON string.
var stringByte = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c == '"':
			t[c] = quote
		case c == '\\' || c < 0x20:
			t[c] = refused
		case c >= utf8.RuneSelf:
			t[c] = nonASCII
		}
	}
	return t
}()

// scanNumber reads the JSON number at body[i] (RFC 8259, section 6:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?) and returns its literal
// and the index after it.
func scanNumber(body string, i int) (lit string, next int, ok bool) {
	start := i
	if i < len(body) && body[i] == '-' {
		i++
	}
	switch {
	case i < len(body) && body[i] == '0':
		i++
	case i < len(body) && body[i] >= '1' && body[i] <= '9':
		i = skipDigits(body, i+1)
	default:
		return "", i, false
	}
	if i < len(body) && body[i] == '.' {
		j := skipDigits(body, i+1)
		if j == i+1 {
			return "", i, false
		}
		i = j
	}
	if i < len(body) && (body[i] == 'e' || body[i] == 'E') {
		i++
		if i < len(body) && (body[i] == '+' || body[i] == '-') {
			i++
		}
		j := skipDigits(body, i)
		if j == i {
			return "", i, false
		}
		i = j
	}
	return body[start:i], i, true
}

// skipDigits returns the index of the first byte at or after i that is not
// a decimal digit.
func skipDigits(b string, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
