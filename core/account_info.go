package core

import (
	"unsafe"

	"github.com/google/uuid"

	"marketd/core/money"
)

// infoStrings is the number of AccountInfo's string and byte fields,
// which an account keeps in one array (accountInfo).
const infoStrings = 6

// accountInfo is an account's AccountInfo as the account keeps it: the
// fields without pointers as they are, and the six strings (name,
// password hash, referral code, wallet, persona, terms' version) one
// after the other in text, each ending at its ends entry. Six strings
// were six pointer words in each of a million accounts and three or four
// heap objects, which the garbage collector's mark reads and follows on
// every cycle; one array is one word and one object (docs/PERFORMANCE.md,
// "Accounts the collector does not scan").
//
// text is never written once set: the strings infoOf returns are views
// of it, and a new info gets a new array (setInfo).
type accountInfo struct {
	Role          Role
	CreatedAt     int64
	Referrer      uuid.UUID
	Mode          money.Currency
	TOSAcceptedAt int64
	Settings      Settings
	ends          [infoStrings]uint32
}

// infoFields returns the info's strings in text's order, for setInfo.
func infoFields(in *AccountInfo) [infoStrings]string {
	return [infoStrings]string{in.Name, unsafe.String(unsafe.SliceData(in.PasswordHash), len(in.PasswordHash)),
		in.ReferralCode, in.Wallet, in.Persona, in.TOSVersion}
}

// setInfo sets the account's info to a copy of in, sharing no memory
// with it: replay reuses a record's memory after applying it. Caller
// holds a.mu.
func (a *account) setInfo(in *AccountInfo) {
	fs := infoFields(in)
	n := 0
	for _, f := range fs {
		n += len(f)
	}
	var text []byte
	if n > 0 {
		text = make([]byte, 0, n)
	}
	st := accountInfo{Role: in.Role, CreatedAt: in.CreatedAt, Referrer: in.Referrer, Mode: in.Mode,
		TOSAcceptedAt: in.TOSAcceptedAt, Settings: in.Settings}
	for i, f := range fs {
		text = append(text, f...)
		st.ends[i] = uint32(len(text))
	}
	a.info, a.refs().text = st, text
}

// infoOf returns the account's info. Its strings and password hash share
// the account's memory, which is never written: the hash must not be
// modified. Caller holds a.mu.
func (a *account) infoOf() AccountInfo {
	in := &a.info
	out := AccountInfo{Role: in.Role, CreatedAt: in.CreatedAt, Referrer: in.Referrer, Mode: in.Mode,
		TOSAcceptedAt: in.TOSAcceptedAt, Settings: in.Settings}
	out.Name, out.ReferralCode, out.Wallet = a.infoString(0), a.infoString(2), a.infoString(3)
	out.Persona, out.TOSVersion = a.infoString(4), a.infoString(5)
	if hash := a.infoString(1); hash != "" {
		out.PasswordHash = unsafe.Slice(unsafe.StringData(hash), len(hash))
	}
	return out
}

// name returns the account's name. Caller holds a.mu.
func (a *account) name() string { return a.infoString(0) }

// referralCode returns the account's referral code ("" for the house).
// Caller holds a.mu.
func (a *account) referralCode() string { return a.infoString(2) }

// wallet returns the account's linked wallet, "" when none. Caller holds
// a.mu.
func (a *account) wallet() string { return a.infoString(3) }

// infoString returns the info's string i in text's order (infoFields).
func (a *account) infoString(i int) string {
	start := uint32(0)
	if i > 0 {
		start = a.info.ends[i-1]
	}
	if start == a.info.ends[i] {
		return ""
	}
	return unsafe.String(&a.refs().text[start], a.info.ends[i]-start)
}
