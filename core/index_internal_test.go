package core

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestCheckFindsDriftedLookups(t *testing.T) {
	tests := []struct {
		name  string
		drift func(x *indexes)
	}{
		{"code", func(x *indexes) { x.codes[codeKey([]byte("ABCDEFGH"))] = uuid.New() }},
		{"wallet", func(x *indexes) { x.wallets["0xabc"] = uuid.New() }},
		{"deposit", func(x *indexes) { x.txs["0x1"] = txRef{uuid.New(), uuid.New()} }},
		{"referee", func(x *indexes) { x.referees[uuid.New()] = []uuid.UUID{uuid.New()} }},
		{"created market", func(x *indexes) { x.created[uuid.New()] = []uuid.UUID{uuid.New()} }},
		{"proposal", func(x *indexes) { x.proposals[uuid.New()] = uuid.New() }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewState()
			if err := s.Check(); err != nil {
				t.Fatalf("fresh state: %v", err)
			}
			tc.drift(&s.idx)
			if err := s.Check(); err == nil || !strings.Contains(err.Error(), "lookups") {
				t.Fatalf("Check = %v, want a lookup violation", err)
			}
		})
	}
}

// TestCheckFindsDriftedLookupsOfAccounts: with accounts in every part of
// the check's walk (arrays of the arena in both parts), a lookup entry
// that names the wrong account, one missing, and two accounts given one
// referral code or wallet, or two deposits given one transaction (each
// part's rebuild right on its own), are all reported; a rejected deposit's
// transaction taken again by a new deposit (docs/API.md, "Custody") is not.
func TestCheckFindsDriftedLookupsOfAccounts(t *testing.T) {
	const n = 3 * arenaFirstChunk // the first array in one part, the next in the other
	const hash = "0xAB12"         // mixed case: the lookup keys it lower-cased
	tests := []struct {
		name  string
		drift func(s *State, ids []uuid.UUID)
		legal bool // the change is no drift: Check must still pass
	}{
		{"none", nil, false},
		{"code names another account", func(s *State, ids []uuid.UUID) {
			s.idx.codes[testCodeKey(n-1)] = ids[0]
		}, false},
		{"code missing", func(s *State, ids []uuid.UUID) { delete(s.idx.codes, testCodeKey(1)) }, false},
		{"wallet missing", func(s *State, ids []uuid.UUID) { delete(s.idx.wallets, testWallet(n-1)) }, false},
		{"referee missing", func(s *State, ids []uuid.UUID) { delete(s.idx.referees, ids[0]) }, false},
		{"one code, two accounts", func(s *State, ids []uuid.UUID) {
			a := s.account(ids[n-1])
			a.editInfo(func(in *AccountInfo) { in.ReferralCode = s.account(ids[1]).referralCode() })
			delete(s.idx.codes, testCodeKey(n-1))
		}, false},
		// Accounts 1 and 10 are in different parts (the first array holds
		// the house and accounts 0-6, the second 7-22), and the kept
		// lookup names the one a single rebuild in memory order would
		// keep, the later: only the parts' count finds it.
		{"one code, two accounts in two parts, the later kept", func(s *State, ids []uuid.UUID) {
			a := s.account(ids[10])
			a.editInfo(func(in *AccountInfo) { in.ReferralCode = s.account(ids[1]).referralCode() })
			delete(s.idx.codes, testCodeKey(10))
			s.idx.codes[testCodeKey(1)] = ids[10]
		}, false},
		// Accounts 1 and 5 are both in the first array, so in one part,
		// 5 the later: that part's rebuild keeps 5, as the kept lookup
		// does, and the parts' count is one short on both sides. Only the
		// rebuild's noticing a code filed twice finds it.
		{"one code, two accounts in one part, the later kept", func(s *State, ids []uuid.UUID) {
			a := s.account(ids[5])
			a.editInfo(func(in *AccountInfo) { in.ReferralCode = s.account(ids[1]).referralCode() })
			delete(s.idx.codes, testCodeKey(5))
			s.idx.codes[testCodeKey(1)] = ids[5]
		}, false},
		// The same for a wallet, account 5's written in upper case: the
		// lookup, and the rebuild, key it lower-cased.
		{"one wallet, two accounts in one part, the later kept", func(s *State, ids []uuid.UUID) {
			s.account(ids[5]).editInfo(func(in *AccountInfo) { in.Wallet = strings.ToUpper(testWallet(1)) })
			delete(s.idx.wallets, testWallet(5))
			s.idx.wallets[testWallet(1)] = ids[5]
		}, false},
		// Deposits of accounts 1 and 5 with one transaction, both credited,
		// the kept lookup naming 5's, as that part's rebuild does.
		{"one tx hash, two accounts in one part, the later kept", func(s *State, ids []uuid.UUID) {
			testDeposit(s, ids[1], hash, TransferCredited)
			t5 := testDeposit(s, ids[5], strings.ToLower(hash), TransferCredited)
			s.idx.txs[strings.ToLower(hash)] = txRef{ids[5], t5}
		}, false},
		{"one tx hash, two deposits of one account, the later kept", func(s *State, ids []uuid.UUID) {
			testDeposit(s, ids[1], hash, TransferCredited)
			t2 := testDeposit(s, ids[1], hash, TransferCredited)
			s.idx.txs[strings.ToLower(hash)] = txRef{ids[1], t2}
		}, false},
		{"one tx hash, rejected then credited in one account", func(s *State, ids []uuid.UUID) {
			testDeposit(s, ids[1], hash, TransferRejected)
			t2 := testDeposit(s, ids[1], hash, TransferCredited)
			s.idx.txs[strings.ToLower(hash)] = txRef{ids[1], t2}
		}, true},
		{"one tx hash, rejected in one account, credited in a later one", func(s *State, ids []uuid.UUID) {
			testDeposit(s, ids[1], hash, TransferRejected)
			t5 := testDeposit(s, ids[5], hash, TransferCredited)
			s.idx.txs[strings.ToLower(hash)] = txRef{ids[5], t5}
		}, true},
		{"one tx hash, credited in one account, rejected in a later one", func(s *State, ids []uuid.UUID) {
			t1 := testDeposit(s, ids[1], hash, TransferCredited)
			testDeposit(s, ids[5], hash, TransferRejected)
			s.idx.txs[strings.ToLower(hash)] = txRef{ids[1], t1}
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewState()
			ids := make([]uuid.UUID, n)
			for i := range ids {
				ids[i] = uuid.New()
				info := AccountInfo{Name: fmt.Sprint("a", i), ReferralCode: fmt.Sprintf("C%07d", i), Wallet: testWallet(i)}
				if i > 0 {
					info.Referrer = ids[0]
				}
				ch := AccountChange{ID: ids[i], Info: &info}
				a := s.newAccount(ids[i])
				a.applyLocked(uint64(i+1), &ch, IdempotencyLimits{})
				s.addAccount(a)
				s.indexAccount(ids[i], nil, &ch)
			}
			if err := s.Check(); err != nil {
				t.Fatalf("before the drift: %v", err)
			}
			if tc.drift == nil {
				return
			}
			tc.drift(s, ids)
			if tc.legal {
				if err := s.Check(); err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			if err := s.Check(); err == nil || !strings.Contains(err.Error(), "lookups") {
				t.Fatalf("Check = %v, want a lookup violation", err)
			}
		})
	}
}

// testCodeKey is the key of account i's referral code in the test above.
func testCodeKey(i int) codeKey {
	k, _ := codeKeyOf(fmt.Sprintf("C%07d", i))
	return k
}

// testWallet is account i's wallet in the test above, lower-cased as the
// lookup keys it.
func testWallet(i int) string { return fmt.Sprintf("0x%040d", i) }

// testDeposit gives account id a deposit of transaction hash in status st,
// as if it had been made and resolved, without the lookups' knowing: the
// cases above set the kept lookup themselves. It returns the deposit's ID.
func testDeposit(s *State, id uuid.UUID, hash string, st TransferStatus) uuid.UUID {
	t := Transfer{ID: uuid.New(), Kind: TransferDeposit, Status: st, Amount: 1, Claimed: 1, TxHash: hash}
	a := s.account(id)
	m := a.editMore()
	m.transfers = append(m.transfers, t)
	return t.ID
}
