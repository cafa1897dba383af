package strictjson

import (
	"errors"
	"reflect"

	"github.com/go-json-experiment/json/jsontext"
)

// rejectNull runs before the library decodes any value into the Go value
// that p points to. It refuses a JSON null for a value that cannot be nil:
// the library would store the zero value ("", 0, false, an empty struct),
// and a client could think it had cleared a field that it had not, or a
// handler take an explicit null for a valid "". A null for a pointer, slice,
// map or interface is left to the library, which stores nil: the field is
// then absent, as if the body had not had it. A type with its own JSON
// decoder (Number, money.Amount) is given the null and
// decides; a type decoded from text (uuid.UUID) needs a string.
//
// It returns errors.ErrUnsupported, which tells the library to go on as
// usual, for every value it lets through.
func rejectNull(dec *jsontext.Decoder, p any) error {
	if dec.PeekKind() != 'n' {
		return errors.ErrUnsupported
	}
	t := reflect.TypeOf(p).Elem()
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		return errors.ErrUnsupported
	}
	if ownDecoder(t) {
		return errors.ErrUnsupported
	}
	return &Error{Reason: "must be " + want(t)}
}
