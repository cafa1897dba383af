package core

import (
	"fmt"

	"github.com/google/uuid"

	"marketd/core/money"
)

// VigRole is the part in which an account earns vig. Values are written to
// disk.
type VigRole uint8

// The vig roles that accounts other than the house play (docs/API.md,
// "GET /api/vig").
const (
	VigCreator  VigRole = 1
	VigReferrer VigRole = 2
)

// String returns the wire name of the role.
func (r VigRole) String() string {
	switch r {
	case VigCreator:
		return "creator"
	case VigReferrer:
		return "referrer"
	}
	return fmt.Sprintf("vig_role(%d)", uint8(r))
}

// Valid reports whether r is a known role.
func (r VigRole) Valid() bool { return r == VigCreator || r == VigReferrer }

// VigPayment is what a market's settlement did with the vig one account
// accrued in one role and currency: what had accrued and what was paid.
type VigPayment struct {
	Market   uuid.UUID
	Currency money.Currency
	Role     VigRole
	Accrued  money.Amount
	Paid     money.Amount
	Time     int64 // the settlement, Unix nanoseconds
}
