package core

import (
	"reflect"
	"testing"

	"github.com/google/uuid"

	"marketd/core/money"
)

// testAccount returns an account of a new state's arena, not stored.
func testAccount() *account { return NewState().newAccount(uuid.New()) }

// editInfo changes the account's info through fn, as a test's corruption
// of the state does.
func (a *account) editInfo(fn func(*AccountInfo)) {
	in := a.infoOf()
	fn(&in)
	a.setInfo(&in)
}

// TestAccountInfoRoundTrip: what setInfo keeps, infoOf gives back, field
// for field, with every string empty or not, and with no memory shared
// with the info it was given.
func TestAccountInfoRoundTrip(t *testing.T) {
	full := AccountInfo{Name: "alice", Role: RoleAdmin, PasswordHash: []byte("$argon2id$hash"), CreatedAt: 7,
		Referrer: uuid.New(), ReferralCode: "ABCDEFGH", Mode: money.USDC,
		Wallet: "0x52908400098527886E0F7030069857D2E4169EE7", Persona: "a persona, é", TOSVersion: "2026-01",
		TOSAcceptedAt: 9, Settings: Settings{NotificationsOff: true, HideFromLeaderboard: true, Theme: ThemeLight}}
	for _, tc := range []struct {
		name string
		in   AccountInfo
	}{
		{"empty", AccountInfo{}},
		{"full", full},
		{"name only", AccountInfo{Name: "bob"}},
		{"hash only", AccountInfo{PasswordHash: []byte{0, 1, 2}}},
		{"last only", AccountInfo{TOSVersion: "v1"}},
		{"middle empty", AccountInfo{Name: "carol", Wallet: "0x1", TOSVersion: "v2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := testAccount()
			in := tc.in
			in.PasswordHash = append([]byte(nil), tc.in.PasswordHash...)
			if len(tc.in.PasswordHash) == 0 {
				in.PasswordHash = nil
			}
			a.setInfo(&in)
			if got := a.infoOf(); !reflect.DeepEqual(got, in) {
				t.Fatalf("infoOf = %+v, want %+v", got, in)
			}
			if a.name() != in.Name || a.referralCode() != in.ReferralCode || a.wallet() != in.Wallet {
				t.Errorf("name, code, wallet = %q, %q, %q; want %q, %q, %q",
					a.name(), a.referralCode(), a.wallet(), in.Name, in.ReferralCode, in.Wallet)
			}
			for i := range in.PasswordHash {
				in.PasswordHash[i] ^= 0xff
			}
			if got := a.infoOf().PasswordHash; len(got) > 0 && got[0] == in.PasswordHash[0] {
				t.Errorf("the kept hash changed with the given one")
			}
		})
	}
}
