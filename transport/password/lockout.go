package password

import (
	"encoding/hex"
	"fmt"
	"time"
)

// LockoutLimits are the failure limits of a Lockout: each is a number of
// failures within a period, after which logins of that kind are refused
// for the period after the last failure.
type LockoutLimits struct {
	// PerClient limits the failures of one name from one client address
	// (production: 5 a minute), so that one client's guesses stop soon
	// and do not use up the name's global budget alone.
	PerClient      int
	PerClientBlock time.Duration
	// PerName limits the failures of one name from all clients without a
	// device cookie (production: 30 in 15 minutes): however many addresses
	// an attacker holds, guesses at a name stay bounded.
	PerName      int
	PerNameBlock time.Duration
	// PerDevice limits the failures through one device cookie
	// (production: 10 an hour), which the other two do not count.
	PerDevice      int
	PerDeviceBlock time.Duration
}

// DefaultLockoutLimits are the limits of production (docs/API.md,
// "Failed logins and password hashing").
var DefaultLockoutLimits = LockoutLimits{
	PerClient: 5, PerClientBlock: time.Minute,
	PerName: 30, PerNameBlock: 15 * time.Minute,
	PerDevice: 10, PerDeviceBlock: time.Hour,
}

// Attempt is one login as the Lockout sees it.
type Attempt struct {
	// Name is the account name tried, compared ignoring case.
	Name string
	// Client identifies the client address (an IPv4 address or an IPv6
	// /64, as the rate limiter keys it).
	Client [16]byte
	// Device is the ID of a valid device cookie bound to the named
	// account, or "" when the login came without one.
	Device string
}

// Lockout decides which logins may try a password, following OWASP's
// "device cookies" (Slow Down Online Guessing Attacks with Device
// Cookies): a login that presents a valid device cookie for the account
// (one the server issued to a browser that logged in to it before) is
// counted and limited by that cookie only, so that failures from others
// cannot lock its owner out; every other login is counted per name and
// client, and per name over all clients. It is safe for concurrent use and
// holds no goroutines; its memory is bounded by its Guards'.
type Lockout struct {
	perClient, perName, perDevice *Guard
	// perNameDevices counts, per name, the failures of device cookies the
	// full perDevice table could not count (docs/API.md, "Failed logins
	// and password hashing"), with the PerName limits. Only holders of a
	// valid cookie bound to the name feed it, so strangers' failures never
	// block an owner's cookie through it.
	perNameDevices *Guard
}

// NewLockout returns a Lockout with the given limits, each Guard tracking
// at most DefaultMaxNames entries.
func NewLockout(l LockoutLimits) *Lockout {
	if l.PerClient < 1 || l.PerName < 1 || l.PerDevice < 1 {
		panic(fmt.Sprintf("BUG: password: NewLockout(%+v)", l))
	}
	return &Lockout{
		perClient: NewGuard(l.PerClient, l.PerClientBlock),
		perName:   NewGuard(l.PerName, l.PerNameBlock),
		perDevice: NewGuard(l.PerDevice, l.PerDeviceBlock),

		perNameDevices: NewGuard(l.PerName, l.PerNameBlock),
	}
}

// clientKey is the Guard key of a name from a client: the folded name and
// the client in hex, so that no client bytes can alias another name.
func clientKey(a *Attempt) string {
	return foldName(a.Name) + "|" + hex.EncodeToString(a.Client[:])
}

// deviceKey is the Guard key of a device cookie.
func deviceKey(a *Attempt) string { return "device|" + a.Device }

// Check reports whether the attempt is refused before its password is
// hashed, and for how long. With a device cookie only the cookie's own
// failures count; without one, the name's from this client and the
// name's from everyone without a cookie.
//
// A cookie is never refused because others filled the device table: a
// cookie the full table does not track has no failures of its own there,
// and is limited instead by the failures of the name's untracked cookies
// (perNameDevices), which no stranger can add to.
func (l *Lockout) Check(a Attempt, now time.Time) (retryAfter time.Duration, blocked bool) {
	if a.Device != "" {
		retry, blocked, full := l.perDevice.checkRoom(deviceKey(&a), now)
		if !full {
			return retry, blocked
		}
		// Full here too: the name's untracked cookies go uncounted rather
		// than refuse owners (docs/API.md, "Failed logins and password
		// hashing").
		retry, blocked, _ = l.perNameDevices.checkRoom(foldName(a.Name), now)
		return retry, blocked
	}
	if retry, blocked := l.perClient.check(clientKey(&a), now); blocked {
		return retry, true
	}
	return l.perName.check(foldName(a.Name), now)
}

// Fail records a wrong password: against the device cookie when the
// attempt had one, else against the name from this client and the name.
func (l *Lockout) Fail(a Attempt, now time.Time) {
	if a.Device != "" {
		if !l.perDevice.fail(deviceKey(&a), now) {
			// The device table is full: bound the cookie's guesses per
			// name instead (Check).
			l.perNameDevices.fail(foldName(a.Name), now)
		}
		return
	}
	l.perClient.fail(clientKey(&a), now)
	l.perName.fail(foldName(a.Name), now)
}

// Succeed forgets the failures of the attempt's cookie, or of its name
// from its client. The name's global count is left to expire: a success
// of the owner must not reopen the name to guessers elsewhere.
func (l *Lockout) Succeed(a Attempt) {
	if a.Device != "" {
		l.perDevice.succeed(deviceKey(&a))
		return
	}
	l.perClient.succeed(clientKey(&a))
}

// Sweep drops the entries whose period and block have ended by now.
func (l *Lockout) Sweep(now time.Time) int {
	return l.perClient.Sweep(now) + l.perName.Sweep(now) + l.perDevice.Sweep(now) + l.perNameDevices.Sweep(now)
}

// Len returns the number of entries tracked, for a gauge.
func (l *Lockout) Len() int {
	return l.perClient.Len() + l.perName.Len() + l.perDevice.Len() + l.perNameDevices.Len()
}
