// Package password provides the password handling of account sign-up and
// login: bcrypt hashing on a small bounded pool (Hasher) and a guard against
// guessing (Guard).
//
// # Hasher
//
// bcrypt at cost 10 takes tens of milliseconds of one core (85 ms on the
// 2-core development machine). Run freely on every request goroutine, a
// burst of logins would take every core from the market actors, so at most
// a fixed number of hashes run at once and a fixed number wait; a call
// beyond both gets ErrBusy at once, which the caller answers with 503 and
// Retry-After. A waiting call gives up when its context is done. Passwords
// are pre-hashed with SHA-256 (why: prehash in hasher.go), and an unknown
// account is compared against a dummy hash so that it costs the same time
// as a wrong password and does not reveal which names exist.
//
// # Guard
//
// A name (compared ignoring case) that fails maxFailures logins within one
// block period is refused for the block period after its last failure,
// whether or not the account exists. The caller checks before hashing:
//
//	if retry, blocked := guard.Check(name, now); blocked {
//		// 429 with Retry-After: retry
//	}
//	ok, err := hasher.Compare(ctx, account.PasswordHash, password) // nil hash if no such account
//	switch {
//	case err != nil: // ErrBusy: 503; a done context; a malformed hash: 500
//	case ok:
//		guard.Succeed(name)
//	default:
//		guard.Fail(name, now) // and 401, the same for an unknown name
//	}
//
// # Lockout
//
// The server uses three Guards through a Lockout (lockout.go), after
// OWASP's device cookies: a login presenting a valid device cookie for the
// account is counted by that cookie alone; any other is counted per name
// and client address and per name over all such clients, so that guesses
// at a name stay bounded and others' guesses cannot lock out an owner's
// known device. Such trusted logins also have a reserve of the Hasher's
// admission (NewHasherReserve, CompareTrusted).
//
// All these types are safe for concurrent use and hold no goroutines.
package password
