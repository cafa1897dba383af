// Package strictjson decodes JSON request bodies strictly, with the standard
// library's encoding/json only, and gives handlers the field types and checks
// that turn a body into a 400 naming the offending field.
//
// Decode accepts exactly one JSON object and nothing else: no unknown
// fields (matched by exact name: encoding/json would otherwise accept
// "Side" for "side"), no duplicate keys at any depth, no trailing data, no
// invalid UTF-8 and no unpaired UTF-16 surrogate escapes (encoding/json would
// silently turn both into U+FFFD), no value of the wrong type (null
// included), no number that does not fit its Go field. Every rejection is an
// *Error whose Field is the JSON path of the offending value ("shares",
// "scopes[1]", "meta.tags[0]"), empty when the body as a whole is bad.
//
// Numbers the handler must read exactly are declared as Number, which keeps
// the literal: Number.Amount converts it to a money.Amount without any float,
// and Float and Int check range. Runes, UUID and OneOf check the string
// fields that encoding/json cannot: length in characters, the canonical UUID
// form, enumerations. Missing fields are found by these checks ("is
// required"), since the zero value is what a missing field decodes to.
//
// How: Decode reads the body once with json.Decoder's Token API, checking
// every key and value against a schema of the destination type (built once
// per type and cached) and decoding each member into its field with the
// same decoder. It matches names exactly itself rather than through
// DisallowUnknownFields, whose error is untyped (no field to name without
// parsing the message) and which accepts any capitalization. The
// destination is assigned only when the whole body passed, and a body that
// is not valid JSON always gets its syntax error, with its offset, even
// when a semantic error (an unknown field, say) comes first in the body.
// Bodies are bounded by MaxBodyBytes, MaxDepth and MaxValues.
//
// Supported destination field types: string, bool, integers, floats, Number,
// json.Number, structs (embedded ones flattened), pointers, slices, maps with
// string keys, any, and types implementing json.Unmarshaler or
// encoding.TextUnmarshaler. Their decoders run during the walk, so that
// their errors name the field; inside a slice or map they run twice (once
// to check, once when the container is decoded whole), so they must not have
// side effects. Decode panics, as for any programming error, on other types,
// on the ",string" tag option and on structs with more than 64 fields.
package strictjson
