package core

import (
	"context"
	"fmt"
	"reflect"

	"github.com/google/uuid"

	"marketd/core/money"
)

// FlushKeyUsageBatch is FlushKeyUsage with at most batchKeys keys per
// record, so that tests cover the split into several records without
// 50,000 keys.
func FlushKeyUsageBatch(ctx context.Context, e *Engine, batchKeys int) (int, error) {
	return e.flushUsage(ctx, batchKeys)
}

// LeaderAggregates returns the KP volume and bonuses every account keeps
// for the leaderboard, by account ID.
func LeaderAggregates(s *State) map[uuid.UUID][2]money.Amount {
	out := make(map[uuid.UUID][2]money.Amount)
	s.rangeAccounts(func(a *account) bool {
		a.mu.Lock()
		out[a.id] = [2]money.Amount{a.volumeKP, a.bonusesKP}
		a.mu.Unlock()
		return true
	})
	return out
}

// CapturePieces is Capture with piece ledger entries per image change, so
// that tests cover ledgers continued over several changes.
func CapturePieces(s *State, chunk, piece int, visit func(*Record) error) (uint64, error) {
	return s.capture(chunk, piece, visit)
}

// EstImageBytes returns Capture's estimates of the encoded size of an
// account's image (without its ledger) and of a market's image, which
// must not fall short of the codec's.
func EstImageBytes(a *AccountChange, m *MarketChange) (account, market int) {
	return estAccountImageBytes(a), estMarketImageBytes(m)
}

// InboxLen returns how many commands wait in a market's inbox.
func InboxLen(e *Engine, market uuid.UUID) int { return len(e.st.market(market).inbox) }

// MaxEncodedBytes is the upper bound of a record's encoded size that
// commit holds to MaxRecordBytes.
func MaxEncodedBytes(r *Record) int { return maxEncodedBytes(r) }

// PurgeAuthBatch is PurgeAuth with at most limit items per record, so that
// tests cover the split into several records.
func PurgeAuthBatch(ctx context.Context, e *Engine, limit int) (int, error) {
	return e.purgeAuth(ctx, limit)
}

// ChangePasswordChunked is ChangePassword ending at most perRecord sessions
// per record, so that tests cover the split without 4,097 sessions.
func ChangePasswordChunked(ctx context.Context, e *Engine, account uuid.UUID, hash []byte, keep [32]byte, perRecord int) error {
	return e.changePassword(ctx, account, hash, keep, perRecord)
}

// MarketLagMismatches names the markets whose last applied LSN, which
// readers of a live market wait on, is not their LSN.
func MarketLagMismatches(s *State) []string {
	var out []string
	s.rangeMarkets(func(m *market) bool {
		if got := m.lag.applied.Load(); got != m.lsn {
			out = append(out, fmt.Sprintf("market %s: applied %d, lsn %d", m.id, got, m.lsn))
		}
		return true
	})
	return out
}

// TradeCommandLeftovers runs req as Trade does and returns the names of
// the command's fields that are not zero once the answer has arrived,
// outside the part command.reset clears for a trade (set), and of those
// that are not zero after reset (cleared): both must be empty.
func TradeCommandLeftovers(ctx context.Context, e *Engine, req TradeRequest) (set, cleared []string, err error) {
	c := e.getCommand(opTrade)
	c.trade = req
	err = e.submitBookChange(ctx, c, req.validate(), req.Market, req.Account, nil)
	tradePart := map[string]bool{"op": true, "acct": true, "idem": true, "acted": true, "applied": true,
		"trade": true, "tradeRes": true, "done": true}
	set = nonZeroFields(c, tradePart)
	c.reset()
	cleared = nonZeroFields(c, map[string]bool{"done": true})
	e.cmdPool.Put(c)
	return set, cleared, err
}

// nonZeroFields names c's fields that are not zero, skipping those in skip.
func nonZeroFields(c *command, skip map[string]bool) []string {
	var names []string
	v := reflect.ValueOf(c).Elem()
	for i := range v.NumField() {
		if name := v.Type().Field(i).Name; !skip[name] && !v.Field(i).IsZero() {
			names = append(names, name)
		}
	}
	return names
}

// ArenaLens returns how many accounts and markets the state's arenas have
// allocated, stored or not.
func ArenaLens(s *State) (accounts, markets int) {
	s.accountMem.each(func(*account) bool { accounts++; return true })
	s.marketMem.each(func(*market) bool { markets++; return true })
	return accounts, markets
}
