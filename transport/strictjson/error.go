package strictjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Error is a request body that cannot be accepted: the answer is a 400 with
// its message. Field names the offending value by its JSON path ("shares",
// "scopes[1]", "meta.tags[0].name"); it is empty when the body as a whole is
// bad (not JSON, not an object, trailing data).
type Error struct {
	Field  string // JSON path of the offending value, or "" for the whole body
	Reason string // what is wrong, e.g. "must be a string"
	cause  error  // the underlying error, for logs; may be nil
}

// Error returns "<field>: <reason>", or "invalid JSON body: <reason>" when
// no single field is at fault.
func (e *Error) Error() string {
	if e.Field == "" {
		return "invalid JSON body: " + e.Reason
	}
	return e.Field + ": " + e.Reason
}

// Unwrap returns the error that caused e, such as a *json.SyntaxError or
// money.ErrOverflow, or nil.
func (e *Error) Unwrap() error { return e.cause }

// bodyError reports a body that is bad as a whole.
func bodyError(format string, args ...any) *Error {
	return &Error{Reason: fmt.Sprintf(format, args...)}
}

// syntaxCheck returns the syntax error of body, or nil when body is one
// valid JSON value. json.Unmarshal validates the whole input before it
// decodes anything, so its error names the first bad byte wherever the walk
// happened to stop; decoding into an empty struct keeps the check cheap.
func syntaxCheck(body []byte) *Error {
	var se *json.SyntaxError
	if err := json.Unmarshal(body, &struct{}{}); errors.As(err, &se) {
		return syntaxError(se)
	}
	return nil
}

// syntaxError reports se with its offset, which counts the bytes read when
// the error was found, the bad one included: "(offset 9)" for the '}' of
// {"side":}.
func syntaxError(se *json.SyntaxError) *Error {
	return &Error{Reason: fmt.Sprintf("%s (offset %d)", se, se.Offset), cause: se}
}

// maxKeyBytes bounds how much of a client's key an error message echoes:
// keys are attacker-chosen and may be as long as the body.
const maxKeyBytes = 64

// step is one element of a JSON path: an array index when index >= 0, else
// an object key (which may be empty).
type step struct {
	key   string
	index int
}

// formatPath renders path as "a.b[2].c", clipping over-long keys.
func formatPath(path []step) string {
	var b strings.Builder
	for _, s := range path {
		if s.index >= 0 {
			fmt.Fprintf(&b, "[%d]", s.index)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		if s.key == "" {
			b.WriteString(`""`) // else {"":1} would read as a whole-body error
			continue
		}
		b.WriteString(clip(s.key))
	}
	return b.String()
}

// clip shortens s to at most maxKeyBytes bytes plus "...", cutting at a rune
// boundary.
func clip(s string) string {
	if len(s) <= maxKeyBytes {
		return s
	}
	n := maxKeyBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
