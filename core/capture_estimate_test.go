package core_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/wal/record"
)

// TestCaptureEstimatesCoverEncoding: Capture closes a chunk by an estimate
// of its encoded size, so that no chunk reaches the log codec's record
// limit. The estimate of a full account image (every kept notification,
// vig payments, transfers, idempotency keys, the longest strings) and of a market with
// proposals and votes must not fall short of what the codec writes.
func TestCaptureEstimatesCoverEncoding(t *testing.T) {
	big := money.Amount(math.MaxInt64 / 4) // long varints
	now := int64(math.MaxInt64 / 2)
	mkt, other := uuid.New(), uuid.New()
	info := core.AccountInfo{Name: strings.Repeat("n", 64), PasswordHash: make([]byte, 60),
		ReferralCode: "ABCDEFGH", Wallet: "0x" + strings.Repeat("a", 40),
		Persona: strings.Repeat("p", 2000), TOSVersion: strings.Repeat("v", 64), Mode: money.USDC}
	a := core.AccountChange{ID: uuid.New(), Prev: math.MaxUint32, Info: &info}
	for range 64 {
		a.Positions = append(a.Positions, core.Position{Market: uuid.New(), Currency: money.USDC,
			Shares: [core.NumSides]money.Amount{big, big}, Cost: [core.NumSides]money.Amount{big, big},
			PaidIn: big, Referrer: other, RefVig: big})
	}
	for range core.RecentTradesKept {
		a.Trades = append(a.Trades, core.TradeSummary{ID: uuid.New(), Market: mkt, Currency: money.USDC,
			Side: core.No, Sell: true, Shares: big, Cost: big, Vig: big, Reasoning: strings.Repeat("r", 100), Time: now})
	}
	for i := range core.MaxNotes {
		a.Notes = append(a.Notes, core.Note{ID: math.MaxUint32 + uint64(i), Kind: core.NoteOracleResolved, Read: true,
			Time: now, Market: mkt, Ref: other, Currency: money.USDC, Amount: big, Outcome: core.No})
	}
	for range 100 {
		a.Vig = append(a.Vig, core.VigPayment{Market: mkt, Currency: money.USDC, Role: core.VigReferrer,
			Accrued: big, Paid: big, Time: now})
	}
	for range 50 {
		a.Transfers = append(a.Transfers, core.Transfer{ID: uuid.New(), Kind: core.TransferDeposit,
			Status: core.TransferCredited, Amount: big, TxHash: "0x" + strings.Repeat("f", 64),
			Wallet: info.Wallet, Time: now})
	}
	for i := range 1000 {
		a.Idem = append(a.Idem, core.IdemEntry{Key: strings.Repeat("k", core.MaxIdempotencyKeyBytes-4) + fmt.Sprint(1000+i),
			Index: math.MaxUint32, Time: now, Status: math.MaxUint16, Answer: make([]byte, core.MaxIdemAnswerBytes)})
	}
	m := core.MarketChange{ID: mkt, Prev: math.MaxUint32, Info: &core.MarketInfo{Title: strings.Repeat("t", 200),
		Description: strings.Repeat("d", 5000), Category: "c", Creator: other, Alpha: 0.05, Q0: big,
		ClosesAt: now, CreatedAt: now, Status: core.StatusResolved, Outcome: core.No}}
	for range 10 {
		m.Proposals = append(m.Proposals, core.Proposal{ID: uuid.New(), Outcome: core.No, Status: core.ProposalEscalated,
			Proposer: other, Challenger: other, Bond: big, Votes: [core.NumSides]uint64{math.MaxUint32, math.MaxUint32},
			ChallengeDeadline: now, VoteDeadline: now, CreatedAt: now, ResolvedAt: now})
	}
	for range 1000 {
		m.Votes = append(m.Votes, core.Vote{Proposal: uuid.New(), Account: uuid.New(), Outcome: core.No, Time: now})
	}

	estAccount, estMarket := core.EstImageBytes(&a, &m)
	gotAccount := len(record.Append(nil, &core.Record{Kind: core.KindImage, Accounts: []core.AccountChange{a}}))
	gotMarket := len(record.Append(nil, &core.Record{Kind: core.KindImage, Markets: []core.MarketChange{m}}))
	if estAccount < gotAccount {
		t.Errorf("account image: estimated %d bytes, encoded %d", estAccount, gotAccount)
	}
	if estMarket < gotMarket {
		t.Errorf("market image: estimated %d bytes, encoded %d", estMarket, gotMarket)
	}
}
