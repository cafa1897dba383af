package strictjson_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"marketd/transport/strictjson"
)

// typicalTrade is a trade body of the usual size (about 120 bytes).
const typicalTrade = `{"market_id":"0b5e7c3a-4f1d-4c8e-9a7b-2d6f8e1c3b5a","side":"yes","shares":12.5,"type":"buy","max_cost":20}`

// typicalKey is a key creation body.
const typicalKey = `{"name":"trading bot","scopes":["read","trade"],"expires_in_days":30}`

// BenchmarkDecode measures Decode on typical bodies, against encoding/json
// alone (which checks none of the rules) for scale.
func BenchmarkDecode(b *testing.B) {
	benchmarks := []struct {
		name   string
		body   string
		decode func(body []byte, dst any) error
		dst    func() any
	}{
		{"trade", typicalTrade, strictjson.Decode, trade},
		{"key", typicalKey, strictjson.Decode, key},
		{"trade_rejected_unknown_field", `{"market_id":"x","sides":"yes"}`, strictjson.Decode, trade},
		{"trade_stdlib_unmarshal", typicalTrade, json.Unmarshal, trade},
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
