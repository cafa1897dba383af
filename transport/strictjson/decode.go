package strictjson

import (
	"fmt"
	"reflect"
	"unicode/utf8"
)

// MaxBodyBytes is the largest body Decode accepts. The server should refuse
// larger ones before reading them (fasthttp.Server.MaxRequestBodySize); this
// is the backstop for a handler reached some other way.
const MaxBodyBytes = 64 << 10

// Decode decodes body, which must be exactly one JSON object, into dst, a
// non-nil pointer to a struct whose fields have json tags. Any body it does
// not accept gives an *Error, and then *dst is unchanged; otherwise *dst is
// replaced whole (fields absent from the body are zero, unlike
// json.Unmarshal, which would keep what was there). The package comment
// lists the checks.
//
// Decode panics if dst is not a non-nil pointer to a struct of supported
// field types: that is a programming error, not a bad request.
func Decode(body []byte, dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("BUG: strictjson.Decode: destination must be a non-nil pointer to a struct, got %T", dst))
	}
	t := rv.Type().Elem()
	s := schemaFor(t)
	if err := checkBody(body); err != nil {
		return err
	}
	// Decode into a scratch value: a body rejected halfway leaves *dst as
	// it was, and the handler cannot act on half a request.
	scratch := reflect.New(t).Elem()
	w := newWalker(body, 0, nil)
	if err := w.value(s, scratch); err != nil {
		return err
	}
	if end := skipSpace(body, int(w.dec.InputOffset())); end < len(body) {
		return bodyError("unexpected data after the JSON object at byte offset %d", end)
	}
	rv.Elem().Set(scratch)
	return nil
}

// checkBody checks what can be told of body before walking it: its size,
// that it is not blank, that it is UTF-8 and that it begins an object.
func checkBody(body []byte) error {
	if len(body) > MaxBodyBytes {
		return bodyError("request body is larger than %d bytes", MaxBodyBytes)
	}
	first := skipSpace(body, 0)
	if first == len(body) {
		return bodyError("request body is required")
	}
	if !utf8.Valid(body) {
		// RFC 8259 section 8.1: JSON text is UTF-8. encoding/json would
		// turn each bad byte into U+FFFD without a word.
		return bodyError("invalid UTF-8 at byte offset %d", invalidUTF8(body))
	}
	if c := body[first]; c != '{' {
		if se := syntaxCheck(body); se != nil {
			return se
		}
		return bodyError("expected a JSON object, not %s", describe(c))
	}
	return nil
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
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

// describe names the kind of JSON value that begins with c.
func describe(c byte) string {
	switch c {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
