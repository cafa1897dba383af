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
// referral code (each part's rebuild right on its own) are all reported.
func TestCheckFindsDriftedLookupsOfAccounts(t *testing.T) {
	const n = 3 * arenaFirstChunk // the first array in one part, the next in the other
	tests := []struct {
		name  string
		drift func(s *State, ids []uuid.UUID)
	}{
		{"none", nil},
		{"code names another account", func(s *State, ids []uuid.UUID) {
			s.idx.codes[testCodeKey(n-1)] = ids[0]
		}},
		{"code missing", func(s *State, ids []uuid.UUID) { delete(s.idx.codes, testCodeKey(1)) }},
		{"wallet missing", func(s *State, ids []uuid.UUID) { delete(s.idx.wallets, testWallet(n-1)) }},
		{"referee missing", func(s *State, ids []uuid.UUID) { delete(s.idx.referees, ids[0]) }},
		{"one code, two accounts", func(s *State, ids []uuid.UUID) {
			a := s.account(ids[n-1])
			a.info.ReferralCode = s.account(ids[1]).info.ReferralCode
			delete(s.idx.codes, testCodeKey(n-1))
		}},
		// Accounts 1 and 10 are in different parts (the first array holds
		// the house and accounts 0-6, the second 7-22), and the kept
		// lookup names the one a single rebuild in memory order would
		// keep, the later: only the parts' count finds it.
		{"one code, two accounts in two parts, the later kept", func(s *State, ids []uuid.UUID) {
			a := s.account(ids[10])
			a.info.ReferralCode = s.account(ids[1]).info.ReferralCode
			delete(s.idx.codes, testCodeKey(10))
			s.idx.codes[testCodeKey(1)] = ids[10]
		}},
		// Accounts 1 and 5 are both in the first array, so in one part,
		// 5 the later: that part's rebuild keeps 5, as the kept lookup
		// does, and the parts' count is one short on both sides. Only the
		// rebuild's noticing a code filed twice finds it.
		{"one code, two accounts in one part, the later kept", func(s *State, ids []uuid.UUID) {
			a := s.account(ids[5])
			a.info.ReferralCode = s.account(ids[1]).info.ReferralCode
			delete(s.idx.codes, testCodeKey(5))
			s.idx.codes[testCodeKey(1)] = ids[5]
		}},
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
