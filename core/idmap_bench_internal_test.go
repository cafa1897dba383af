package core

import (
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
)

// BenchmarkTradeLookups: what a trade's submission does to find its market
// and its account (State.market, State.account), from GOMAXPROCS
// goroutines at once over 64 markets and 64 accounts, as in the trade
// benchmarks (docs/PERFORMANCE.md, "The hop to the market's goroutine").
func BenchmarkTradeLookups(b *testing.B) {
	st := NewState()
	var markets, accts [64]uuid.UUID
	for i := range markets {
		markets[i], accts[i] = uuid.New(), uuid.New()
		st.addMarket(st.newMarket(markets[i]))
		st.accounts.store(accts[i], st.newAccount(accts[i]).ref)
	}
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		g := int(next.Add(1))
		for i := 0; pb.Next(); i++ {
			k := (g + i/2) % len(markets)
			if st.market(markets[k]) == nil || st.account(accts[g%len(accts)]) == nil {
				b.Fatal("not found")
			}
		}
	})
}
