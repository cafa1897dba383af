package core

import (
	"github.com/google/uuid"

	"marketd/core/money"
	"marketd/internal/enum"
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

var vigRoleNames = enum.New[VigRole]("vig_role", []string{VigCreator: "creator", VigReferrer: "referrer"})

// String returns the wire name of the role.
func (r VigRole) String() string { return vigRoleNames.Name(r) }

// Valid reports whether r is a known role.
func (r VigRole) Valid() bool { return vigRoleNames.Valid(r) }

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
