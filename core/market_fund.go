package core

import (
	"marketd/core/money"
	"marketd/core/pricing"
)

// fundBook opens a currency's book in a market: the house moves the
// subsidy C(q0) into the market's collateral (docs/ARCHITECTURE.md, "Money
// and the house"). It
// adds the house's change to the scratch record and returns the new book.
// Caller holds house.mu. Runs on the market's goroutine.
func (e *Engine) fundBook(sc *scratch, m *market, house *account, cur money.Currency, now int64, s *sums) Book {
	subsidy := pricing.Subsidy(m.info.Alpha, m.info.Q0)
	hc := sc.account(house, HouseID)
	after := s.sub(house.balances[cur], subsidy)
	sc.credit(hc, cur, TxMarketSubsidy, -subsidy, after, m.id, now)
	return Book{Currency: cur, Q: [NumSides]money.Amount{m.info.Q0, m.info.Q0}, Subsidy: subsidy, Collateral: subsidy}
}
