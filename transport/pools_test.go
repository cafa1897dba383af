package transport

import (
	"testing"

	"github.com/google/uuid"

	"marketd/core"
)

// TestRequestPoolZeroes checks that an object put back keeps nothing of its
// request: a caller or a trade body handed out again must be zero, or a
// request could run as the previous request's caller.
func TestRequestPoolZeroes(t *testing.T) {
	var callers requestPool[caller]
	var bodies requestPool[tradeBody]
	for i := range 100 {
		c := callers.get()
		if *c != (caller{}) {
			t.Fatalf("get %d: caller %+v, want zero", i, *c)
		}
		*c = caller{method: byKey, account: uuid.New(), scopes: core.AllScopes, key: core.Key{Name: "k"}}
		callers.put(c)

		b := bodies.get()
		if b.MarketID != nil || b.text != ([tradeStringFields]string{}) || b.Reasoning != "" {
			t.Fatalf("get %d: trade body %+v, want zero", i, *b)
		}
		if err := b.decode([]byte(`{"market_id":"0b5e7c3a-4f1d-4c8e-9a7b-2d6f8e1c3b5a","side":"yes","shares":1,"type":"buy","reasoning":"r"}`)); err != nil {
			t.Fatal(err)
		}
		bodies.put(b)
	}
}
