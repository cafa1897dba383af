package strictjson

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Runes checks that s has from minRunes to maxRunes characters, counted in
// runes (Unicode code points), as docs/API.md's limits are, rather than bytes:
// "日本語" is 3 characters, not 9. An empty s is "is required" when
// minRunes > 0.
func Runes(field, s string, minRunes, maxRunes int) error {
	n := utf8.RuneCountInString(s)
	switch {
	case n == 0 && minRunes > 0:
		return &Error{Field: field, Reason: "is required"}
	case n < minRunes:
		return &Error{Field: field, Reason: "must be at least " + strconv.Itoa(minRunes) + " characters"}
	case n > maxRunes:
		return &Error{Field: field, Reason: "must be at most " + strconv.Itoa(maxRunes) + " characters"}
	}
	return nil
}

// uuidLen is the length of the canonical form of a UUID,
// xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
const uuidLen = 36

// UUID parses s, which must be a UUID in the canonical hyphenated form of
// 36 characters (either case). uuid.Parse alone would also take the
// braced, urn:uuid: and unhyphenated forms: one ID, one spelling.
func UUID(field, s string) (uuid.UUID, error) {
	if s == "" {
		return uuid.UUID{}, &Error{Field: field, Reason: "is required"}
	}
	if len(s) != uuidLen {
		return uuid.UUID{}, &Error{Field: field, Reason: "must be a UUID"}
	}
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.UUID{}, &Error{Field: field, Reason: "must be a UUID", cause: err}
	}
	return id, nil
}

// OneOf checks that s is one of allowed, the values of an enumeration. An
// empty s is "is required" unless "" is allowed.
func OneOf(field, s string, allowed ...string) error {
	for _, a := range allowed {
		if s == a {
			return nil
		}
	}
	if s == "" {
		return &Error{Field: field, Reason: "is required"}
	}
	quoted := make([]string, len(allowed))
	for i, a := range allowed {
		quoted[i] = strconv.Quote(a)
	}
	return &Error{Field: field, Reason: "must be one of " + strings.Join(quoted, ", ")}
}
