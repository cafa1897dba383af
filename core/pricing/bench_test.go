package pricing

import (
	"math"
	"testing"

	"marketd/core/money"
)

// benchAlpha and benchQ are a typical market: the default alpha, 1000 units
// a side to start, moved by trading to 1300 against 900.
var (
	benchAlpha = 0.05 / (2 * math.Ln2)
	benchQ     = [2]money.Amount{1_300 * money.Scale, 900 * money.Scale}
)

// Sinks keep the compiler from dropping the benchmarked calls.
var (
	sinkFloat  float64
	sinkAmount money.Amount
)

func BenchmarkCostAndPrices(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		c := Cost(benchAlpha, benchQ)
		yes, no := Prices(benchAlpha, benchQ)
		sinkFloat += c + yes + no
	}
}

func BenchmarkBuyCost(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		c, err := BuyCost(benchAlpha, benchQ, 0, 10*money.Scale)
		if err != nil {
			b.Fatal(err)
		}
		sinkAmount += c
	}
}

func BenchmarkSellProceeds(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		c, err := SellProceeds(benchAlpha, benchQ, 1, 10*money.Scale)
		if err != nil {
			b.Fatal(err)
		}
		sinkAmount += c
	}
}

// BenchmarkQuoteBuy is the trade path: prices before, cost, vig, q after.
func BenchmarkQuoteBuy(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		qt, err := QuoteBuy(benchAlpha, benchQ, 0, 10*money.Scale)
		if err != nil {
			b.Fatal(err)
		}
		sinkAmount += qt.Amount + qt.Vig
	}
}

func BenchmarkVig(b *testing.B) {
	b.ReportAllocs()
	yes, no := Prices(benchAlpha, benchQ)
	for b.Loop() {
		sinkAmount += Vig(12_345_678, yes, no)
	}
}
