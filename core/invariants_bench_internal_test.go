package core

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/google/uuid"

	"marketd/core/money"
	"marketd/internal/cputime"
)

// BenchmarkCheckAccounts measures the state's check (Check) over 1,000,000
// accounts made as a snapshot's load makes them, one after another, each
// with a name, a referral code and a signup bonus: the check that ends
// every recovery, whose walks over the accounts were most of the rise of
// the time to ready (docs/PERFORMANCE.md, "The time to ready's walks over
// the accounts"). It reports the wall time and the CPU of all goroutines
// per account. CHECK_ACCOUNTS sets another number of accounts, for a run
// under cachegrind (docs/PERFORMANCE.md, "The check's referral codes by
// lookups").
func BenchmarkCheckAccounts(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("CHECK_ACCOUNTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			b.Fatalf("CHECK_ACCOUNTS %q: want a positive count", v)
		}
	}
	st := NewState()
	for i := range n {
		id := uuid.New()
		a := st.newAccount(id)
		info := AccountInfo{Name: fmt.Sprintf("bot%07d", i), ReferralCode: fmt.Sprintf("r%07d", i)}
		bonus := money.Units(1_000)
		ch := AccountChange{ID: id, Info: &info,
			Balances: []Balance{{Currency: money.KP, After: bonus}},
			Ledger:   []LedgerEntry{{Seq: uint64(i + 1), Currency: money.KP, Type: TxSignupBonus, Amount: bonus, BalanceAfter: bonus}}}
		a.applyLocked(uint64(i+1), &ch, IdempotencyLimits{})
		st.addAccount(a)
		st.indexAccount(id, nil, &ch)
		st.supply.minted[money.KP] += bonus
	}
	if err := st.Check(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0, hasCPU := cputime.Process()
	for b.Loop() {
		if err := st.Check(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n)/float64(b.N), "ns/account")
	if cpu1, ok := cputime.Process(); hasCPU && ok {
		b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(n)/float64(b.N), "cpu-ns/account")
	}
}
