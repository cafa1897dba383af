package core

import "marketd/internal/enum"

// Side is an outcome of a market: yes or no. Values are written to disk.
type Side uint8

// The sides.
const (
	Yes Side = 0
	No  Side = 1
)

// NumSides is the number of outcomes of every market.
const NumSides = 2

var sideNames = enum.New[Side]("side", []string{Yes: "yes", No: "no"})

// String returns "yes" or "no".
func (s Side) String() string { return sideNames.Name(s) }

// Other returns the opposite side.
func (s Side) Other() Side { return 1 - s }

// Status is a market's lifecycle state. Values are written to disk.
type Status uint8

// The market statuses: active -> closed (at closes_at) -> resolved; a market
// may also be resolved straight from active. Closing and settling are the
// statuses of a close or a settlement done in bounded steps, one record
// each, over more holders than one record holds (docs/ARCHITECTURE.md,
// "Bounded steps"): the market takes no trade while in either.
const (
	StatusActive   Status = 0
	StatusClosed   Status = 1
	StatusResolved Status = 2
	StatusClosing  Status = 3 // on its way from active to closed
	StatusSettling Status = 4 // on its way to resolved, its outcome decided
)

// NumStatuses is the number of market statuses, for arrays indexed by
// Status.
const NumStatuses = 5

var statusNames = enum.New[Status]("status", []string{
	StatusActive:   "active",
	StatusClosed:   "closed",
	StatusResolved: "resolved",
	StatusClosing:  "closing",
	StatusSettling: "settling",
})

// String returns the wire name of the status.
func (s Status) String() string { return statusNames.Name(s) }

// Role is an account's role. Values are written to disk.
type Role uint8

// The roles.
const (
	RoleSpeculator Role = 0
	RoleAdmin      Role = 1
)

var roleNames = enum.New[Role]("role", []string{RoleSpeculator: "speculator", RoleAdmin: "admin"})

// String returns the wire name of the role.
func (r Role) String() string { return roleNames.Name(r) }

// TxType is the type of a ledger entry. Values are written to disk.
type TxType uint8

// The ledger entry types (docs/API.md, "GET /api/points").
const (
	TxSignupBonus      TxType = 1
	TxTradeBuy         TxType = 2
	TxTradeSell        TxType = 3
	TxSplit            TxType = 4
	TxMerge            TxType = 5
	TxSettlementPayout TxType = 6
	TxVigEarning       TxType = 7
	TxReferralBonus    TxType = 8
	TxOracleBond       TxType = 9
	TxOracleBondReturn TxType = 10
	TxOracleReward     TxType = 11
	TxDeposit          TxType = 12
	TxWithdrawal       TxType = 13
	TxMarketSubsidy    TxType = 14 // house funds a market's subsidy
	TxMarketReturn     TxType = 15 // a settled market returns its remainder to the house
	// Wave 2: custody's refund of a failed withdrawal, and the oracle's vote
	// stakes (docs/API.md, "The oracle").
	TxWithdrawalRefund  TxType = 16
	TxOracleStake       TxType = 17 // a vote locks its stake
	TxOracleStakeReturn TxType = 18 // a stake comes back
)

var txTypeNames = enum.New[TxType]("tx_type", []string{
	TxSignupBonus:       "signup_bonus",
	TxTradeBuy:          "trade_buy",
	TxTradeSell:         "trade_sell",
	TxSplit:             "split",
	TxMerge:             "merge",
	TxSettlementPayout:  "settlement_payout",
	TxVigEarning:        "vig_earning",
	TxReferralBonus:     "referral_bonus",
	TxOracleBond:        "oracle_bond",
	TxOracleBondReturn:  "oracle_bond_return",
	TxOracleReward:      "oracle_reward",
	TxDeposit:           "deposit",
	TxWithdrawal:        "withdrawal",
	TxMarketSubsidy:     "market_subsidy",
	TxMarketReturn:      "market_return",
	TxWithdrawalRefund:  "withdrawal_refund",
	TxOracleStake:       "oracle_stake",
	TxOracleStakeReturn: "oracle_stake_return",
})

// String returns the wire name of the ledger entry type.
func (t TxType) String() string { return txTypeNames.Name(t) }

// Valid reports whether t is a known ledger entry type.
func (t TxType) Valid() bool { return txTypeNames.Valid(t) }

// Scopes is a set of API key scopes. Values are written to disk.
type Scopes uint8

// The scopes of API keys (docs/API.md, "POST /api/keys").
const (
	ScopeRead  Scopes = 1 << 0
	ScopeTrade Scopes = 1 << 1
	ScopeAdmin Scopes = 1 << 2
	// AllScopes is every scope: what a session holds.
	AllScopes = ScopeRead | ScopeTrade | ScopeAdmin
)

// Has reports whether s includes every scope of want.
func (s Scopes) Has(want Scopes) bool { return s&want == want }

// Tier is an API key's rate-limit tier. Values are written to disk.
type Tier uint8

// The rate-limit tiers (docs/API.md, "Rate limits").
const (
	TierStandard  Tier = 0
	TierPremium   Tier = 1
	TierUnlimited Tier = 2
)

var tierNames = enum.New[Tier]("tier", []string{
	TierStandard:  "standard",
	TierPremium:   "premium",
	TierUnlimited: "unlimited",
})

// String returns the wire name of the tier.
func (t Tier) String() string { return tierNames.Name(t) }

// ParseTier maps a tier's wire name to the Tier.
func ParseTier(name string) (Tier, bool) { return tierNames.Parse(name) }
