package core

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"marketd/core/money"
)

// LeaderboardMaxAge is how old the leaderboard's cached ranking may get
// before a request rebuilds it: the ranking walks every account, and a
// public endpoint must not do that on every request.
const LeaderboardMaxAge = time.Second

// Leader is one account's line on the leaderboard, in KP.
type Leader struct {
	Account uuid.UUID
	Name    string
	// Profit is what trading, settlement and vig earned the account:
	// its KP balance plus the cost basis of its open KP positions, minus
	// the signup and referral bonuses it was given. Open positions count
	// at cost, not at market value, so the figure moves only with the
	// account's own ledger and positions, not with other traders' prices.
	Profit money.Amount
	// Volume is the sum of the absolute amounts of the account's trade_buy
	// and trade_sell ledger entries: what it paid and received trading.
	Volume money.Amount
}

// leaderboardCache is the ranking shared by leaderboard requests, rebuilt
// at most once per LeaderboardMaxAge of the engine's clock.
type leaderboardCache struct {
	mu      sync.Mutex
	builtAt time.Time // engine clock at the last rebuild; guarded by mu
	built   bool      // guarded by mu
	// ranked is immutable once built: a rebuild replaces it whole.
	ranked []Leader // guarded by mu
}

// Leaderboard returns the number of ranked accounts and the first limit of
// them, by profit descending, then volume descending, then name ascending.
// The house is not ranked, nor is any account that never traded KP (volume
// 0) or that asked to be hidden (Settings.HideFromLeaderboard); admins are
// ranked like anyone. The ranking is at most
// LeaderboardMaxAge old by the engine's clock: the request that finds it
// older rebuilds it with one pass over the accounts, each read briefly
// under its own lock, while concurrent requests wait for it.
func (e *Engine) Leaderboard(limit int) (total int, leaders []Leader) {
	b := &e.board
	b.mu.Lock()
	now := e.cfg.Now()
	// A clock that went back counts as stale too: a test's, or a step.
	if age := now.Sub(b.builtAt); !b.built || age >= LeaderboardMaxAge || age < 0 {
		b.ranked = e.rankAccounts()
		b.builtAt, b.built = now, true
	}
	ranked := b.ranked
	b.mu.Unlock()
	n := min(max(limit, 0), len(ranked))
	return len(ranked), slices.Clone(ranked[:n])
}

// rankAccounts builds the ranking with one pass over the accounts.
func (e *Engine) rankAccounts() []Leader {
	var out []Leader
	e.st.rangeAccounts(func(a *account) bool {
		if a.id == HouseID {
			return true
		}
		a.mu.Lock()
		l, ok := a.leaderLocked()
		a.mu.Unlock()
		if ok {
			out = append(out, l)
		}
		return true
	})
	slices.SortFunc(out, func(x, y Leader) int {
		if c := cmp.Compare(y.Profit, x.Profit); c != 0 {
			return c
		}
		if c := cmp.Compare(y.Volume, x.Volume); c != 0 {
			return c
		}
		// Names are unique ignoring case; the ID settles only what the
		// name cannot (a state restored from a log with clashing names).
		if c := cmp.Compare(x.Name, y.Name); c != 0 {
			return c
		}
		return compareIDs(x.Account, y.Account)
	})
	return out
}

// leaderLocked returns the account's leaderboard line, and whether it is
// ranked at all (it traded KP and did not ask to be hidden). Lock should
// be held.
func (a *account) leaderLocked() (Leader, bool) {
	if a.volumeKP == 0 || a.info.Settings.HideFromLeaderboard {
		return Leader{}, false
	}
	profit := a.balances[money.KP]
	for p := range a.refs().positions.all() {
		if p.Currency == money.KP {
			profit = addSigned(profit, addSigned(p.Cost[Yes], p.Cost[No]))
		}
	}
	profit = addSigned(profit, -a.bonusesKP)
	// The name is a view of the account's info (infoOf), kept only as
	// long as this ranking: no copy per ranked account.
	return Leader{Account: a.id, Name: a.name(), Profit: profit, Volume: a.volumeKP}, true
}
