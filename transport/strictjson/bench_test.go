package strictjson_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"marketd/transport/strictjson"
)

// typicalTrade is a trade body of the usual size (about 120 bytes).
const typicalTrade = `{"market_id":"0b5e7c3a-4f1d-4c8e-9a7b-2d6f8e1c3b5a","side":"yes","shares":12.5,"type":"buy","max_cost":20}`

// typicalTradeNullCheck is typicalTrade with a reasoning that reads "null".
const typicalTradeNullCheck = `{"market_id":"0b5e7c3a-4f1d-4c8e-9a7b-2d6f8e1c3b5a","side":"yes","shares":12.5,"type":"buy","max_cost":20,"reasoning":"null"}`

// typicalKey is a key creation body.
const typicalKey = `{"name":"trading bot","scopes":["read","trade"],"expires_in_days":30}`

// manyValues returns prefix, then elem repeated with commas, then "]}", as
// long as MaxBodyBytes allows.
func manyValues(prefix, elem string) string {
	n := (strictjson.MaxBodyBytes - len(prefix) - 2) / (len(elem) + 1)
	return prefix + strings.Repeat(elem+",", n-1) + elem + "]}"
}

// BenchmarkDecode measures Decode on typical and worst-case bodies, against
// encoding/json alone (which checks none of the rules) and the library's
// bare Unmarshal (which checks all but null) for scale.
func BenchmarkDecode(b *testing.B) {
	benchmarks := []struct {
		name   string
		body   string
		decode func(body []byte, dst any) error
		dst    func() any
	}{
		{"trade", typicalTrade, strictjson.Decode, trade},
		{"key", typicalKey, strictjson.Decode, key},
		// "null" anywhere in a body turns on the check of nulls.
		{"trade_with_null_check", typicalTradeNullCheck, strictjson.Decode, trade},
		{"trade_rejected_unknown_field", `{"market_id":"x","sides":"yes"}`, strictjson.Decode, trade},
		{"trade_rejected_syntax", `{"market_id":"x","side":"yes",}`, strictjson.Decode, trade},
		// The worst cases the old MaxValues and MaxDepth were for: as many
		// tiny values as MaxBodyBytes holds, and the deepest nesting the
		// library allows.
		{"worst_64KiB_of_strings", manyValues(`{"scopes":[`, `"a"`), strictjson.Decode, key},
		{"worst_64KiB_of_numbers_in_any", manyValues(`{"extra":[`, `1`), strictjson.Decode, nested},
		{"worst_nesting_9999", `{"extra":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`, strictjson.Decode, nested},
		// An unknown field first, then the grammar check of the whole body
		// finds the missing '}' at its end.
		{"worst_64KiB_rejected_at_the_end", strings.TrimSuffix(manyValues(`{"bogus":0,"extra":[`, `1`), "}"), strictjson.Decode, nested},
		{"trade_stdlib_unmarshal", typicalTrade, json.Unmarshal, trade},
		{"trade_library_unmarshal_reject_unknown", typicalTrade, func(body []byte, dst any) error {
			return jsonv2.Unmarshal(body, dst, jsonv2.RejectUnknownMembers(true))
		}, trade},
		{"trade_stdlib_decoder_disallow_unknown", typicalTrade, func(body []byte, dst any) error {
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.DisallowUnknownFields()
			return dec.Decode(dst)
		}, trade},
	}
	for _, bm := range benchmarks {
		b.Run(bm.name, func(b *testing.B) {
			body := []byte(bm.body)
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				_ = bm.decode(body, bm.dst())
			}
		})
	}
}
