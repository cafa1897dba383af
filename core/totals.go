package core

import (
	"math"

	"marketd/core/money"
)

// Bounds of the totals (docs/API.md, "Totals"). Money totals never wrap:
// an operation that would take a balance, a supply or a market's
// collateral past what it may hold is refused before anything is applied
// (ErrTotalLimit, through sums). Statistics summed over all time (volumes,
// the leaderboard's aggregates) saturate at MaxStatistic instead, since a
// statistic must never refuse a trade.
const (
	// MaxSupply bounds the money of one currency in circulation (minted
	// less burned): 10^12 units, so that no sum of balances, collateral,
	// bonds and stakes, each under it, comes near the 9.2*10^12 units an
	// Amount holds. A mint past it (a signup or referral bonus, a deposit,
	// a refund) is refused.
	MaxSupply = money.Amount(1_000_000_000_000 * money.Scale)
	// MaxStatistic is where a statistic saturates: the largest Amount,
	// 9,223,372,036,854.775807 units.
	MaxStatistic = money.Amount(math.MaxInt64)
)
