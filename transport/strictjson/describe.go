package strictjson

import (
	"encoding"
	"reflect"

	"github.com/go-json-experiment/json"
)

// The words of the error messages for values of the wrong kind.

var (
	jsonUnmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	jsonUnmarshalerFromType = reflect.TypeFor[json.UnmarshalerFrom]()
	textUnmarshalerType     = reflect.TypeFor[encoding.TextUnmarshaler]()
	numberType              = reflect.TypeFor[Number]()
)

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

// ownDecoder reports whether t, or a pointer to it, decodes JSON itself.
func ownDecoder(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(jsonUnmarshalerType) || p.Implements(jsonUnmarshalerFromType)
}

// textDecoder reports whether t, or a pointer to it, is decoded from a
// JSON string by its UnmarshalText method (and has no JSON decoder).
func textDecoder(t reflect.Type) bool {
	return !ownDecoder(t) && reflect.PointerTo(t).Implements(textUnmarshalerType)
}

// want describes in plain words the JSON values a Go value of type t
// accepts, completing "must be".
func want(t reflect.Type) string {
	one, _ := words(t)
	return one
}

// words names the JSON values a Go value of type t accepts: one of them,
// completing "must be", and many of them, completing "an array of".
func words(t reflect.Type) (one, many string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == numberType:
		return "a number", "numbers"
	case textDecoder(t):
		return "a string", "strings"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string", "strings"
	case reflect.Bool:
		return "true or false", "booleans"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer", "integers"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a non-negative integer", "integers"
	case reflect.Float32, reflect.Float64:
		return "a number", "numbers"
	case reflect.Struct, reflect.Map:
		return "an object", "objects"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Interface {
			return "an array", "arrays"
		}
		_, elems := words(t.Elem())
		return "an array of " + elems, "arrays"
	}
	return "a valid value", "values"
}
