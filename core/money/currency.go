package money

import "marketd/internal/enum"

// Currency is what an amount is counted in. Each currency is a separate
// world: its own balances, its own pricing state in every market, its own
// conservation invariant.
type Currency uint8

// The currencies. Their numeric values are written to disk and never change
// meaning.
const (
	KP   Currency = 0 // K-Points, the platform's internal points
	USDC Currency = 1 // USD Coin, moved through the custody interface
)

// NumCurrencies is the number of currencies; arrays indexed by Currency have
// this length.
const NumCurrencies = 2

var currencyNames = enum.New[Currency]("currency", []string{KP: "kp", USDC: "usdc"})

// String returns the currency's wire name: "kp" or "usdc".
func (c Currency) String() string { return currencyNames.Name(c) }

// Valid reports whether c is a known currency.
func (c Currency) Valid() bool { return c < NumCurrencies }

// ParseCurrency maps a wire name to its Currency.
func ParseCurrency(s string) (Currency, bool) { return currencyNames.Parse(s) }
