// Package money provides exact quantities in integer micro-units (1e-6) and
// the currencies they are counted in.
//
// An Amount is used for money (balances, costs, ledger amounts) and for
// share counts alike: both are exact integers of micro-units, never floats.
// Arithmetic that could overflow is checked and reports ErrOverflow instead
// of wrapping, so a bug or a hostile input can never mint money.
package money
