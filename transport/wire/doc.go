// Package wire holds the JSON shapes of marketd's answers (docs/API.md,
// "Conventions" and each endpoint's section), defined once: transport
// encodes them, and the clients that read answers (bench/client, the
// tests of transport and cmd/marketd) decode the same types, so that a
// change to an answer's shape shows up everywhere.
//
// Field names are snake_case; money is money.Amount (exact, at most 6
// decimals); prices, multipliers and alpha are float64 at full precision;
// IDs are uuid.UUID; times are Timestamp. The package holds types only:
// how core's values become these answers is transport's.
package wire
