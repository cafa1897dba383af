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
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == numberType:
		return "a number"
	case textDecoder(t):
		return "a string"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Interface {
			return "an array"
		}
		return "an array of " + plural(t.Elem())
	}
	return "a valid value"
}

// plural names many values of type t, completing "an array of".
func plural(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == numberType:
		return "numbers"
	case textDecoder(t):
		return "strings"
	}
	switch t.Kind() {
	case reflect.String:
		return "strings"
	case reflect.Bool:
		return "booleans"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "integers"
	case reflect.Float32, reflect.Float64:
		return "numbers"
	case reflect.Struct, reflect.Map:
		return "objects"
	case reflect.Slice, reflect.Array:
		return "arrays"
	}
	return "values"
}
