package strictjson

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
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

// Unwrap returns the error that caused e, such as a *jsontext.SyntacticError,
// a *json.SemanticError or money.ErrOverflow, or nil.
func (e *Error) Unwrap() error { return e.cause }

// bodyError reports a body that is bad as a whole.
func bodyError(format string, args ...any) *Error {
	return &Error{Reason: fmt.Sprintf(format, args...)}
}

// grammarOptions accept everything RFC 8259's grammar accepts, so that
// grammarError finds only what encoding/json would call a syntax error.
var grammarOptions = json.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

// grammarError returns the *Error of body if it is not one JSON value by
// RFC 8259's grammar (duplicate names, invalid UTF-8 and unpaired
// surrogate escapes allowed), else nil. It runs only on bodies already
// refused, a second pass that costs about what the first did.
func grammarError(body []byte) *Error {
	dec := jsontext.NewDecoder(bytes.NewReader(body), grammarOptions)
	if _, err := dec.ReadValue(); err != nil {
		var se *jsontext.SyntacticError
		if !errors.As(err, &se) {
			// The reader is in memory: only EOF before any value.
			return &Error{Reason: "unexpected end of JSON input at byte offset 0", cause: err}
		}
		reason := se.Err.Error()
		if errors.Is(se.Err, io.ErrUnexpectedEOF) {
			reason = "unexpected end of JSON input"
		}
		return &Error{Reason: fmt.Sprintf("%s at byte offset %d", reason, se.ByteOffset), cause: se}
	}
	if end := skipSpace(body, int(dec.InputOffset())); end < len(body) {
		what := "value"
		if body[skipSpace(body, 0)] == '{' {
			what = "object"
		}
		return bodyError("unexpected data after the JSON %s at byte offset %d", what, end)
	}
	return nil
}

// translate turns err, the library's refusal of body, into an *Error.
//
// Whether the client is told that its body is not JSON must not depend on
// which problem the library met first: the library stops at the first
// problem in document order, so a body that is not JSON at all could get an
// unknown field from its first member. So the body's grammar is checked
// first, then its UTF-8 (RFC 8259 section 8.1), and only then is err
// reported, naming the field its JSON pointer points to.
func translate(body []byte, err error) error {
	if ge := grammarError(body); ge != nil {
		return ge
	}
	if !utf8.Valid(body) {
		return &Error{Reason: fmt.Sprintf("invalid UTF-8 at byte offset %d", invalidUTF8(body)), cause: err}
	}
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) {
		return translateSyntactic(body, syn)
	}
	var sem *json.SemanticError
	if errors.As(err, &sem) {
		return translateSemantic(sem)
	}
	// Neither kind: the library's own documentation allows only I/O
	// errors besides, and the input is in memory.
	return &Error{Reason: "malformed JSON", cause: err}
}

// translateSyntactic maps an error of the syntactic layer that the grammar
// allows: a duplicate name or an unpaired surrogate escape.
func translateSyntactic(body []byte, se *jsontext.SyntacticError) *Error {
	field := formatPointer(se.JSONPointer)
	if errors.Is(se.Err, jsontext.ErrDuplicateName) {
		// The pointer ends with the duplicate name.
		return &Error{Field: field, Reason: "duplicate field", cause: se}
	}
	if surrogateEscape(body, se.ByteOffset) {
		// RFC 8259 section 8.2 leaves the meaning of such a string
		// unpredictable; encoding/json would turn it into U+FFFD. The
		// pointer is to the value, or for a name to its object.
		reason := fmt.Sprintf("unpaired UTF-16 surrogate escape at byte offset %d", se.ByteOffset)
		if field != "" {
			reason = "contains an " + reason
		}
		return &Error{Field: field, Reason: reason, cause: se}
	}
	return &Error{Reason: fmt.Sprintf("malformed JSON at byte offset %d", se.ByteOffset), cause: se}
}

// translateSemantic maps an error about a value that is JSON, but not what
// its Go field accepts.
func translateSemantic(se *json.SemanticError) *Error {
	e := &Error{Field: formatPointer(se.JSONPointer), Reason: "is not valid", cause: se}
	var own *Error // from Number, rejectNull or a type of the caller's
	switch {
	case errors.Is(se.Err, json.ErrUnknownName):
		// The pointer ends with the unknown name.
		e.Reason = "unknown field"
	case errors.As(se.Err, &own):
		e.Reason = own.Reason
	case se.GoType == nil:
	case ownDecoder(se.GoType):
		// The type's decoder refused the value, for reasons of its own;
		// a type that wants them told returns an *Error.
	case textDecoder(se.GoType) && se.JSONKind != '"':
		e.Reason = "must be a string"
	case textDecoder(se.GoType):
		// UnmarshalText refused the string.
	case errors.Is(se.Err, strconv.ErrRange):
		e.Reason = "is out of range"
	default:
		// A value of the wrong kind, an integer written with a fraction
		// or an exponent, a negative one for an unsigned field.
		e.Reason = "must be " + want(se.GoType)
	}
	return e
}

// surrogateEscape reports whether body has a \u escape of a UTF-16
// surrogate at offset.
func surrogateEscape(body []byte, offset int64) bool {
	if offset < 0 || offset+6 > int64(len(body)) {
		return false
	}
	esc := body[offset : offset+6]
	if esc[0] != '\\' || esc[1] != 'u' {
		return false
	}
	r, err := strconv.ParseUint(string(esc[2:]), 16, 16)
	return err == nil && r >= 0xD800 && r < 0xE000
}

// invalidUTF8 returns the offset of the first byte of b that does not begin
// a valid UTF-8 sequence.
func invalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// maxKeyBytes bounds how much of a client's key an error message echoes:
// keys are attacker-chosen and may be as long as the body.
const maxKeyBytes = 64

// formatPointer renders the JSON pointer p (RFC 6901) as a path in the
// style of the handlers' messages, "legs[1].outcome", clipping over-long
// names. A token of decimal digits is taken for an array index: a pointer
// does not say which it is, and request fields are not named by numbers
// (a numeric key of a map shows as an index).
func formatPointer(p jsontext.Pointer) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		if b.Len() > 0 && isIndex(tok) {
			b.WriteByte('[')
			b.WriteString(tok)
			b.WriteByte(']')
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		if tok == "" {
			b.WriteString(`""`) // else {"":1} would read as a whole-body error
			continue
		}
		b.WriteString(clip(tok))
	}
	return b.String()
}

// isIndex reports whether tok is written as an array index in a JSON
// pointer: decimal digits without a leading zero.
func isIndex(tok string) bool {
	if tok == "" || len(tok) > 1 && tok[0] == '0' {
		return false
	}
	for i := range len(tok) {
		if tok[i] < '0' || tok[i] > '9' {
			return false
		}
	}
	return true
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
