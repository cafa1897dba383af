// Package strictjson decodes JSON request bodies strictly, with
// github.com/go-json-experiment/json (the Go team's encoding/json/v2, in
// step with the standard library's experimental json/v2), and gives
// handlers the field types and checks that turn a body into a 400 naming
// the offending field.
//
// Decode accepts exactly one JSON object and nothing else: no unknown
// fields (matched by exact name: encoding/json would accept "Side" for
// "side"), no duplicate keys at any depth, no trailing data, no invalid
// UTF-8 and no unpaired UTF-16 surrogate escapes (encoding/json would
// silently turn both into U+FFFD), no value of the wrong type, no number
// that does not fit its Go field, nothing beyond MaxBodyBytes or nested
// deeper than the library's fixed 10000 levels. JSON's grammar has no NaN
// or infinity, so every number is finite as written. Every rejection is an
// *Error whose Field is the JSON path of the offending value ("shares",
// "scopes[1]", "legs[1].outcome"), empty when the body as a whole is bad.
// Whether a body is told that it is not JSON does not depend on where the
// first problem is: a grammar error anywhere, then invalid UTF-8 anywhere,
// win over a field's error.
//
// JSON null: a null for a pointer, slice, map or interface field leaves it
// nil, the same as an absent field, so a handler that needs the field
// answers "<field>: is required" for either. A null anywhere else is
// refused ("reasoning: must be a string", "shares: must be a number"), as
// the library would otherwise store the zero value and the handler could
// not tell null from "" or 0. A type with its own JSON decoder decides for
// itself (Number and money.Amount refuse null).
//
// Numbers the handler must read exactly are declared as Number, which keeps
// the literal: Number.Amount converts it to a money.Amount without any
// float, and Float and Int check range. Runes, UUID and OneOf check the
// string fields that the decoder cannot: length in characters, the
// canonical UUID form, enumerations. Missing fields are found by these
// checks ("is required"), since the zero value is what a missing field
// decodes to.
//
// Why this library: a benchmark of the trade path (docs/PERFORMANCE.md,
// "HTTP path") showed body decoding as its largest server-side
// cost. The walk over encoding/json's Token API that this package used
// took about 9.7 µs and 67 allocations per 106-byte trade body in
// BenchmarkDecode (9 to 13 µs in the HTTP profile), half of the
// allocations encoding/json building and discarding a SyntaxError per
// value; go-json-experiment/json makes every check above but unknown
// fields by default, and Decode takes about 1.9 µs and 4 allocations
// (medians of 6, the destination's allocation included).
//
// ScanFlat is a fast path beside Decode for a handler whose body is, in
// the usual case, a flat object of strings without escapes and numbers (a
// trade's): it reads only that, without allocating, and gives up on
// anything else, which the handler then hands to Decode, so that every
// refusal is still Decode's.
//
// Limits: MaxBodyBytes. The library's nesting limit is fixed at 10000
// levels and it does not count values, so the old MaxDepth (32) and
// MaxValues (4096) are gone: they bounded the old walk's CPU (1 µs a
// value), and at the library's speed MaxBodyBytes alone bounds it. The
// worst bodies measured: 64 KiB of one-character strings into a []string,
// 2 ms; of numbers into an any field, 7 ms (32k float64 boxed; transport
// has no any field); 9999 nested arrays in an any field, 4 ms.
//
// Destination field types are those the library decodes (see its
// Unmarshal): strings, booleans, numbers, Number, structs (embedded ones
// flattened, as by encoding/json), pointers, slices, maps, any, and types
// with UnmarshalJSON, UnmarshalJSONFrom or UnmarshalText methods. A field
// of a type it cannot decode (a channel, say) is refused with an *Error
// naming it when a body has it. Decode panics, as for any programming
// error, when the destination is not a non-nil pointer to a struct.
package strictjson
