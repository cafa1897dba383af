package strictjson

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// kind is what a schema node accepts.
type kind uint8

const (
	kindAny     kind = iota // any JSON value (a field of type any)
	kindString              // a string
	kindBool                // true or false
	kindInt                 // an integer literal that fits bits
	kindUint                // a non-negative integer literal that fits bits
	kindFloat               // a number that fits bits
	kindNumber              // a number literal, kept as is (Number, json.Number)
	kindStruct              // an object with the fields of a struct
	kindMap                 // an object with any keys
	kindSlice               // an array
	kindPointer             // null, or what elem accepts
	kindCustom              // whatever the type's own decoder accepts
	kindText                // a string, for an encoding.TextUnmarshaler
)

// maxFields is the most JSON fields a struct may have: the walk records the
// fields it has seen in one uint64 to find duplicates without allocating.
const maxFields = 64

// schema is what the walk checks a JSON value against: a tree that mirrors
// the destination type. Schemas are immutable once built.
type schema struct {
	kind   kind
	typ    reflect.Type   // the Go type; a walk that only checks decodes kindCustom and kindText values into a new one
	bits   int            // size of kindInt, kindUint and kindFloat
	elem   *schema        // kindSlice, kindMap and kindPointer
	fields map[string]int // kindStruct: exact JSON name -> index in kids
	kids   []*schema      // kindStruct: schema of each field
	index  [][]int        // kindStruct: reflect index of each field, through embedded structs
}

var (
	numberType          = reflect.TypeFor[Number]()
	jsonNumberType      = reflect.TypeFor[json.Number]()
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	anySchema           = &schema{kind: kindAny}
)

// schemas caches the schema of each destination type. It is a memo of a pure
// function of the type, like encoding/json's own field cache: building a
// schema costs reflection and maps, and Decode runs on every request.
var schemas sync.Map // reflect.Type -> *schema

// schemaFor returns the schema of struct type t, building it on first use.
func schemaFor(t reflect.Type) *schema {
	if s, ok := schemas.Load(t); ok {
		return s.(*schema)
	}
	s := build(t, map[reflect.Type]*schema{})
	actual, _ := schemas.LoadOrStore(t, s)
	return actual.(*schema)
}

// build returns the schema of t. Types under construction are in building,
// so that recursive types (a struct with a slice of itself) terminate.
func build(t reflect.Type, building map[reflect.Type]*schema) *schema {
	if s, ok := building[t]; ok {
		return s
	}
	s := &schema{typ: t}
	building[t] = s
	switch {
	case t == numberType || t == jsonNumberType:
		s.kind = kindNumber
	case t.Kind() == reflect.Pointer:
		s.kind = kindPointer
		s.elem = build(t.Elem(), building)
	case implements(t, unmarshalerType):
		s.kind = kindCustom
	case implements(t, textUnmarshalerType):
		s.kind = kindText
	default:
		buildKind(s, t, building)
	}
	return s
}

func implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || reflect.PointerTo(t).Implements(iface)
}

// buildKind fills s for a type without a decoder of its own.
func buildKind(s *schema, t reflect.Type, building map[reflect.Type]*schema) {
	switch t.Kind() {
	case reflect.String:
		s.kind = kindString
	case reflect.Bool:
		s.kind = kindBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		s.kind, s.bits = kindInt, t.Bits()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		s.kind, s.bits = kindUint, t.Bits()
	case reflect.Float32, reflect.Float64:
		s.kind, s.bits = kindFloat, t.Bits()
	case reflect.Interface:
		if t.NumMethod() != 0 {
			panic(fmt.Sprintf("BUG: strictjson: cannot decode into interface type %v", t))
		}
		s.kind = kindAny
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !implements(t.Elem(), unmarshalerType) && !implements(t.Elem(), textUnmarshalerType) {
			// encoding/json reads []byte as base64 text; no request needs it.
			panic(fmt.Sprintf("BUG: strictjson: cannot decode into byte slice type %v", t))
		}
		s.kind = kindSlice
		s.elem = build(t.Elem(), building)
	case reflect.Map:
		k := t.Key()
		if k.Kind() != reflect.String || implements(k, textUnmarshalerType) {
			panic(fmt.Sprintf("BUG: strictjson: map key of %v must be a plain string type", t))
		}
		s.kind = kindMap
		s.elem = build(t.Elem(), building)
	case reflect.Struct:
		s.kind = kindStruct
		buildFields(s, t, building)
	default:
		panic(fmt.Sprintf("BUG: strictjson: cannot decode into %v", t))
	}
}

// field is a candidate JSON field of a struct, found at depth levels of
// embedding.
type field struct {
	name   string
	depth  int
	tagged bool
	typ    reflect.Type
	index  []int
}

// buildFields resolves the JSON fields of struct t as encoding/json does:
// embedded structs without a tag name are flattened, and of several fields
// with one name the shallowest wins, then the tagged one. Where
// encoding/json would silently drop an ambiguous name, this panics: a
// request type with one is a mistake.
func buildFields(s *schema, t reflect.Type, building map[reflect.Type]*schema) {
	var all []field
	collectFields(t, nil, &all)
	best := map[string]int{} // name -> index in all of the winning field
	ambiguous := map[string]bool{}
	for i, f := range all {
		j, ok := best[f.name]
		switch {
		case !ok:
			best[f.name] = i
		case f.depth < all[j].depth || f.depth == all[j].depth && f.tagged && !all[j].tagged:
			best[f.name] = i
			delete(ambiguous, f.name)
		case f.depth == all[j].depth && f.tagged == all[j].tagged:
			ambiguous[f.name] = true
		}
	}
	for name := range ambiguous {
		panic(fmt.Sprintf("BUG: strictjson: %v has several fields named %q", t, name))
	}
	if len(best) > maxFields {
		panic(fmt.Sprintf("BUG: strictjson: %v has %d JSON fields, more than %d", t, len(best), maxFields))
	}
	s.fields = make(map[string]int, len(best))
	for i, f := range all {
		if best[f.name] != i {
			continue
		}
		s.fields[f.name] = len(s.kids)
		s.kids = append(s.kids, build(f.typ, building))
		s.index = append(s.index, f.index)
	}
}

// collectFields appends the candidate JSON fields of struct t, embedded at
// reflect index at (nil for the outermost struct), to all.
func collectFields(t reflect.Type, at []int, all *[]field) {
	for i := range t.NumField() {
		sf := t.Field(i)
		index := append(append([]int(nil), at...), i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		for opt := range strings.SplitSeq(opts, ",") {
			if opt == "string" {
				panic(fmt.Sprintf("BUG: strictjson: %v.%s: the ,string option is not supported; use Number", t, sf.Name))
			}
		}
		ft := sf.Type
		if sf.Anonymous && name == "" {
			if ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct {
				panic(fmt.Sprintf("BUG: strictjson: %v embeds pointer %v; embed the struct", t, ft))
			}
			if ft.Kind() == reflect.Struct {
				collectFields(ft, index, all)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		tagged := name != ""
		if !tagged {
			name = sf.Name
		}
		*all = append(*all, field{name: name, depth: len(at), tagged: tagged, typ: ft, index: index})
	}
}

// want describes in plain words what s accepts, completing "must be".
func (s *schema) want() string {
	switch s.kind {
	case kindString, kindText:
		return "a string"
	case kindBool:
		return "true or false"
	case kindInt:
		return "an integer"
	case kindUint:
		return "a non-negative integer"
	case kindFloat, kindNumber:
		return "a number"
	case kindStruct, kindMap:
		return "an object"
	case kindSlice:
		if s.elem.kind == kindAny {
			return "an array"
		}
		return "an array of " + s.elem.plural()
	case kindPointer:
		return s.elem.want()
	}
	return "a valid value"
}

// plural names many values of s, completing "an array of".
func (s *schema) plural() string {
	switch s.kind {
	case kindString, kindText:
		return "strings"
	case kindBool:
		return "booleans"
	case kindInt, kindUint:
		return "integers"
	case kindFloat, kindNumber:
		return "numbers"
	case kindStruct, kindMap:
		return "objects"
	case kindSlice:
		return "arrays"
	case kindPointer:
		return s.elem.plural()
	}
	return "values"
}
