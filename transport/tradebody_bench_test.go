package transport

import (
	"testing"

	"github.com/google/uuid"
)

// BenchmarkTradeBody measures the trade route's body decode and
// validation of the body marketd-load sends, as the handler does them: a
// pooled body, decode, toCore, put back.
func BenchmarkTradeBody(b *testing.B) {
	account := uuid.MustParse("5d7a7f0e-8c2b-4c1e-9f3a-6b2d1e0c9a87")
	body := []byte(`{"market_id":"0b5e7c3a-4f1d-4c8e-9a7b-2d6f8e1c3b5a","side":"yes","shares":1,"type":"buy"}`)
	var pool requestPool[tradeBody]
	b.ReportAllocs()
	for b.Loop() {
		tb := pool.get()
		if err := tb.decode(body); err != nil {
			b.Fatal(err)
		}
		if _, err := tb.toCore(account); err != nil {
			b.Fatal(err)
		}
		pool.put(tb)
	}
}
