package core

import "errors"

// invariant names one family of the checks of Check, for CheckReport.
type invariant int

const (
	invConservation invariant = iota
	invLedger
	invAggregates
	invPositions
	invCollateral
	invCurve
	invProposals
	invLookups
	invOverflow
	numInvariants
)

// invariantNames are the names CheckReport gives, in its order.
var invariantNames = [numInvariants]string{
	invConservation: "conservation per currency (balances + house + collateral + bonds + stakes = minted - burned)",
	invLedger:       "every balance equals the end of its ledger chain",
	invAggregates:   "leaderboard aggregates equal their recomputation from the KP ledger",
	invPositions:    "positions add up to each market's shares (q - q0 + sets split at par), none negative",
	invCollateral:   "collateral covers what each market owes; a resolved market holds none",
	invCurve:        "each book's collateral, less the sets split at par, covers C(q) rounded for the house",
	invProposals:    "at most one open oracle proposal per market, none once resolved; stakes add up to their votes'",
	invLookups:      "derived lookups equal a rebuild from the state",
	invOverflow:     "no sum overflows",
}

// InvariantResult is the outcome of one family of invariants.
type InvariantResult struct {
	Name       string
	Violations int // how many were found
}

// Holds reports whether the invariant holds.
func (r InvariantResult) Holds() bool { return r.Violations == 0 }

// CheckReport runs the checks of Check and returns the outcome of each
// family of invariants, in a fixed order, with the error Check would
// return (nil when all hold). Like Check, it reads a quiescent state.
func (s *State) CheckReport() ([]InvariantResult, error) {
	c := s.runChecks()
	out := make([]InvariantResult, numInvariants)
	for i := range out {
		out[i] = InvariantResult{Name: invariantNames[i], Violations: c.counts[i]}
	}
	return out, errors.Join(c.errs...)
}
