package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
)

// MaxDepth is the deepest nesting of objects and arrays a body may have.
// Request bodies are nearly flat; the bound keeps the walk's recursion, and
// the paths in its errors, short whatever the client sends.
const MaxDepth = 32

// MaxValues is the most values (objects, arrays, strings, numbers, true,
// false and null, object keys not counted) a body may have. The walk costs
// about 1 µs a value, so 64 KiB of tiny values ("[1,1,1,...]") would cost
// some 30 ms of CPU; the bound keeps that under 5 ms while leaving room for
// batch requests of hundreds of items (a trade body has 6 or 7 values).
const MaxValues = 4096

// walker checks one JSON value against a schema while it decodes it,
// reading it with the Token API of a json.Decoder over body. It reports the
// first problem in document order, except that a body that is not valid
// JSON always gets its syntax error (see fail).
//
// Objects of struct type are walked member by member and each member is
// decoded by the same decoder into its field, so a body is read once.
// Other containers (slices, maps, any) are walked for their checks and then
// decoded whole with json.Unmarshal: rebuilding encoding/json's slice and
// map decoding here would be more code to get wrong than the extra pass
// over a field costs.
//
// Cost, on a 106-byte trade body: about 8.5 µs and 67 allocations, against
// 3 to 4 µs and 10 for json.Unmarshal, which checks none of this. Half of the
// allocations are encoding/json's: in token mode its Decoder reads each key
// and scalar as a top-level value, and the byte after it (':', ',' or '}')
// makes the scanner build a SyntaxError, with its message, that the
// Decoder then ignores. A first version that walked the body and then
// decoded it again with DisallowUnknownFields took 11 µs and 73
// allocations.
type walker struct {
	dec    *json.Decoder
	body   []byte
	base   int64  // offset of body in the request body, for a nested walk
	values int    // values walked so far, against MaxValues
	path   []step // path of the value being walked
	buf    [4]step
}

func newWalker(body []byte, base int64, path []step) *walker {
	w := &walker{dec: json.NewDecoder(bytes.NewReader(body)), body: body, base: base}
	w.path = append(w.buf[:0], path...)
	return w
}

// UnmarshalJSON lets Decode(w) consume a value without decoding it, for a
// walk that only checks. The walk finds the value's bytes in body.
func (w *walker) UnmarshalJSON([]byte) error { return nil }

// next returns the index in body of the first byte of the next value, or
// len(body). It only chooses what to call next: the decoder itself rejects
// any separator out of place.
func (w *walker) next() int {
	i := int(w.dec.InputOffset())
	for ; i < len(w.body); i++ {
		switch w.body[i] {
		case ' ', '\t', '\n', '\r', ':', ',':
		default:
			return i
		}
	}
	return i
}

// value walks the next value against s and decodes it into dst, which is
// addressable and of type s.typ, or the zero Value for a walk that only
// checks.
func (w *walker) value(s *schema, dst reflect.Value) error {
	if w.values++; w.values > MaxValues {
		return w.fail(bodyError("request body has more than %d values", MaxValues))
	}
	start := w.next()
	for s.kind == kindPointer {
		if start < len(w.body) && w.body[start] == 'n' {
			return w.scalar(s, reflect.Value{}, start) // null leaves the pointer nil
		}
		if dst.IsValid() {
			p := reflect.New(s.typ.Elem())
			dst.Set(p)
			dst = p.Elem()
		}
		s = s.elem
	}
	if s.kind == kindCustom || s.kind == kindText {
		return w.custom(s, dst, start)
	}
	if start < len(w.body) && (w.body[start] == '{' || w.body[start] == '[') {
		return w.container(s, dst, start)
	}
	return w.scalar(s, dst, start)
}

// read consumes the value that begins at start with Decode(target) and
// returns its bytes and the error of decoding them into target. If the
// decoder could not read a value, the bytes are nil and the error is the
// body's syntax error.
func (w *walker) read(target any, start int) ([]byte, error) {
	err := w.dec.Decode(target)
	end := int(w.dec.InputOffset())
	if end <= start {
		// The decoder moves past a value only once it has read all of it.
		return nil, w.syntax(err)
	}
	return w.body[start:end], err
}

// scalar walks a string, number, boolean or null against s.
func (w *walker) scalar(s *schema, dst reflect.Value, start int) error {
	var target any = w
	if dst.IsValid() {
		target = dst.Addr().Interface()
	}
	raw, decodeErr := w.read(target, start)
	if raw == nil {
		return decodeErr
	}
	if err := w.check(s, raw); err != nil {
		return err
	}
	if decodeErr != nil {
		// encoding/json refused what the checks let through.
		return w.fail(w.decodeError(s, decodeErr))
	}
	return nil
}

// container walks an object or an array, which begins at start.
func (w *walker) container(s *schema, dst reflect.Value, start int) error {
	if len(w.path) >= MaxDepth {
		return w.fail(w.errorf("is nested deeper than " + strconv.Itoa(MaxDepth) + " levels"))
	}
	if _, err := w.dec.Token(); err != nil {
		return w.syntax(err)
	}
	var err error
	switch object := w.body[start] == '{'; {
	case object && s.kind == kindStruct:
		return w.object(s, dst)
	case object && (s.kind == kindMap || s.kind == kindAny):
		err = w.object(s, reflect.Value{})
	case !object && s.kind == kindSlice:
		err = w.array(s.elem)
	case !object && s.kind == kindAny:
		err = w.array(anySchema)
	default:
		return w.fail(w.typeError(s))
	}
	if err != nil || !dst.IsValid() {
		return err
	}
	raw := w.body[start:w.dec.InputOffset()]
	if err := json.Unmarshal(raw, dst.Addr().Interface()); err != nil {
		return w.fail(w.decodeError(s, err))
	}
	return nil
}

// object walks the members of an object whose '{' has been read, decoding
// them into the fields of dst when s is a struct and dst is valid.
func (w *walker) object(s *schema, dst reflect.Value) error {
	var seen uint64                  // kindStruct: bit i is field i
	var seenKeys map[string]struct{} // kindMap and kindAny
	for {
		start := w.dec.InputOffset()
		tok, err := w.dec.Token()
		if err != nil {
			return w.syntax(err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil // '}': the decoder allows no other token here
		}
		if err := w.checkKey(start); err != nil {
			return err
		}
		child, field := anySchema, reflect.Value{}
		if s.kind == kindStruct {
			i, ok := s.fields[key]
			switch {
			case !ok:
				return w.fail(w.keyError(key, "unknown field"))
			case seen&(1<<i) != 0:
				return w.fail(w.keyError(key, "duplicate field"))
			}
			seen |= 1 << i
			child = s.kids[i]
			if dst.IsValid() {
				field = dst.FieldByIndex(s.index[i])
			}
		} else {
			if _, dup := seenKeys[key]; dup {
				return w.fail(w.keyError(key, "duplicate field"))
			}
			if seenKeys == nil {
				seenKeys = make(map[string]struct{})
			}
			seenKeys[key] = struct{}{}
			if s.kind == kindMap {
				child = s.elem
			}
		}
		w.path = append(w.path, step{key: key, index: -1})
		if err := w.value(child, field); err != nil {
			return err
		}
		w.path = w.path[:len(w.path)-1]
	}
}

// array walks the elements of an array whose '[' has been read.
func (w *walker) array(elem *schema) error {
	for i := 0; w.dec.More(); i++ {
		w.path = append(w.path, step{index: i})
		if err := w.value(elem, reflect.Value{}); err != nil {
			return err
		}
		w.path = w.path[:len(w.path)-1]
	}
	if _, err := w.dec.Token(); err != nil { // ']'
		return w.syntax(err)
	}
	return nil
}

// check checks the literal raw against s.
func (w *walker) check(s *schema, raw []byte) error {
	switch raw[0] {
	case 'n':
		// encoding/json leaves a string, number, bool or struct unchanged
		// on null: a client could think it had cleared a field it had not.
		switch s.kind {
		case kindPointer, kindAny, kindSlice, kindMap:
			return nil
		}
	case 't', 'f':
		if s.kind == kindBool || s.kind == kindAny {
			return nil
		}
	case '"':
		if s.kind == kindString || s.kind == kindAny {
			return w.checkString(raw)
		}
	default:
		return w.checkNumber(s, raw)
	}
	return w.fail(w.typeError(s))
}

// checkNumber checks the number literal raw against s: the syntax is the
// decoder's, the range is checked as encoding/json will convert it, so that
// the error names the field.
func (w *walker) checkNumber(s *schema, raw []byte) error {
	var err error
	switch s.kind {
	case kindNumber:
		return nil
	case kindAny:
		// encoding/json makes a float64 of it: 1e400 would be infinite.
		_, err = strconv.ParseFloat(string(raw), 64)
	case kindFloat:
		_, err = strconv.ParseFloat(string(raw), s.bits)
	case kindInt:
		_, err = strconv.ParseInt(string(raw), 10, s.bits)
	case kindUint:
		_, err = strconv.ParseUint(string(raw), 10, s.bits)
	default:
		return w.fail(w.typeError(s))
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, strconv.ErrRange):
		return w.fail(w.errorf("is out of range"))
	}
	return w.fail(w.typeError(s)) // a fraction or exponent for an integer
}

// custom walks a value of a type with its own decoder (kindCustom or
// kindText), decoding it into dst
// or, for a walk that only checks, into a scratch value, so that the
// decoder's error names the field either way.
func (w *walker) custom(s *schema, dst reflect.Value, start int) error {
	if !dst.IsValid() {
		dst = reflect.New(s.typ).Elem()
	}
	raw, decodeErr := w.read(dst.Addr().Interface(), start)
	if raw == nil {
		return decodeErr
	}
	switch raw[0] {
	case 'n':
		if s.kind == kindText {
			// encoding/json skips UnmarshalText on null and leaves the
			// value as it was.
			return w.fail(w.typeError(s))
		}
	case '{', '[':
		// The type's decoder saw the value whole: check its inside for
		// duplicates and escapes as any JSON.
		sub := newWalker(raw, w.base+int64(start), w.path)
		sub.values = w.values - 1 // the value itself, counted again
		err := sub.value(anySchema, reflect.Value{})
		w.values = sub.values
		if err != nil {
			return w.fail(err)
		}
	case '"':
		if err := w.checkString(raw); err != nil {
			return err
		}
	}
	if decodeErr != nil {
		return w.fail(w.decodeError(s, decodeErr))
	}
	return nil
}

// checkString rejects a string literal with an unpaired surrogate escape,
// which encoding/json would silently replace with U+FFFD.
func (w *walker) checkString(raw []byte) error {
	if bytes.IndexByte(raw, '\\') >= 0 && unpairedSurrogate(raw) >= 0 {
		return w.fail(w.errorf("contains an unpaired UTF-16 surrogate escape"))
	}
	return nil
}

// checkKey rejects the object key just read, which began at or after start,
// if it has an unpaired surrogate escape.
func (w *walker) checkKey(start int64) error {
	raw := w.body[start:w.dec.InputOffset()]
	if bytes.IndexByte(raw, '\\') < 0 {
		return nil
	}
	if i := unpairedSurrogate(raw); i >= 0 {
		return w.fail(bodyError("object key at byte offset %d contains an unpaired UTF-16 surrogate escape", w.base+start+int64(i)))
	}
	return nil
}

// fail returns e, unless the body is not valid JSON: then the syntax error
// is the answer, wherever it is. So whether a client is told "invalid JSON"
// does not depend on what the walk happened to meet first.
func (w *walker) fail(e error) error {
	if se := syntaxCheck(w.body); se != nil {
		return se
	}
	return e
}

// syntax maps an error of the decoder to the body's syntax error.
func (w *walker) syntax(err error) error {
	if se := syntaxCheck(w.body); se != nil {
		return se
	}
	// The decoder rejected what json.Unmarshal accepts: report it anyway.
	return &Error{Reason: "malformed JSON", cause: err}
}

// errorf returns an error about the value at the current path.
func (w *walker) errorf(reason string) *Error {
	return &Error{Field: formatPath(w.path), Reason: reason}
}

// keyError returns an error about member key of the current object.
func (w *walker) keyError(key, reason string) *Error {
	w.path = append(w.path, step{key: key, index: -1})
	return w.errorf(reason)
}

// typeError reports a value that is not what s accepts.
func (w *walker) typeError(s *schema) *Error {
	return w.errorf("must be " + s.want())
}

// decodeError maps the error of encoding/json, or of a type's own decoder,
// on a value the checks accepted.
func (w *walker) decodeError(s *schema, err error) *Error {
	e := w.errorf("is not valid")
	e.cause = err
	var fe *Error
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &fe):
		e.Reason = fe.Reason
	case errors.As(err, &te) && s.kind != kindCustom:
		e.Reason = "must be " + s.want()
	}
	return e
}
