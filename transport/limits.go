package transport

import (
	"net/netip"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/transport/password"
	"marketd/transport/ratelimit"
)

// Defaults of the per-client limits (docs/API.md, "Rate limits" and
// "Failed logins and password hashing").
const (
	// DefaultRegistrationsPerHour bounds sign-ups per client address (IPv6
	// per /64) an hour: accounts come with a bonus and a budget of keys,
	// so unbounded sign-ups would multiply every per-account limit.
	DefaultRegistrationsPerHour = 20
	// DefaultKeyChangesPerHour bounds key creations and rotations per
	// account an hour.
	DefaultKeyChangesPerHour = 20
	// DefaultPasswordChecksPerMinute bounds the password checks (login,
	// register, password change) one client address may start a minute,
	// before they reach the hashing pool: one client cannot fill it.
	DefaultPasswordChecksPerMinute = 30
	// DefaultClientsPerTable is how many clients each rate-limit table
	// (anonymous IPv4, anonymous IPv6, keys, sessions, ...) holds windows
	// for at most: about 12 MiB each when full, at 96 bytes a window.
	DefaultClientsPerTable = 1 << 17
	// hashReserve is the hashing pool's admission kept for logins with a
	// device cookie (password.NewHasherReserve).
	hashReserve = 16
)

// limits holds the server's rate-limit tables and its login lockout.
// Each kind of client has a table of its own, so that a flood of one kind
// (fresh IPv6 addresses, fresh keys) fills only its own table and cannot
// refuse clients of the other kinds with 503 (docs/API.md, "Rate
// limits").
type limits struct {
	anonV4, anonV6 *ratelimit.Limiter // requests without credentials, a minute
	keys           *ratelimit.Limiter // requests per API key, a minute
	accounts       *ratelimit.Limiter // session requests per account, a minute
	// passwordChecks counts password checks per client address a minute;
	// deviceChecks those of logins with a device cookie, per cookie, in a
	// table of their own, so that a flood of addresses cannot refuse them.
	passwordChecks *ratelimit.Limiter
	deviceChecks   *ratelimit.Limiter
	registrations  *ratelimit.Limiter // per client address, an hour
	keyChanges     *ratelimit.Limiter // key creations and rotations per account, an hour
	lockout        *password.Lockout
}

func newLimits(cfg *Config) *limits {
	n := cfg.ClientsPerTable
	return &limits{
		anonV4:         ratelimit.NewSize(rateWindow, n),
		anonV6:         ratelimit.NewSize(rateWindow, n),
		keys:           ratelimit.NewSize(rateWindow, n),
		accounts:       ratelimit.NewSize(rateWindow, n),
		passwordChecks: ratelimit.NewSize(time.Minute, n),
		deviceChecks:   ratelimit.NewSize(time.Minute, n),
		registrations:  ratelimit.NewSize(time.Hour, n),
		keyChanges:     ratelimit.NewSize(time.Hour, n),
		lockout:        password.NewLockout(cfg.Lockout),
	}
}

// table returns the request-rate table of a client key.
func (l *limits) table(k ratelimit.Key) *ratelimit.Limiter {
	switch k.Kind {
	case ratelimit.KindAPIKey:
		return l.keys
	case ratelimit.KindAccount:
		return l.accounts
	default:
		if netip.AddrFrom16(k.ID).Unmap().Is4() {
			return l.anonV4
		}
		return l.anonV6
	}
}

// sweep drops ended windows and lockout entries.
func (l *limits) sweep(now time.Time) {
	for _, t := range []*ratelimit.Limiter{l.anonV4, l.anonV6, l.keys, l.accounts, l.passwordChecks, l.deviceChecks, l.registrations, l.keyChanges} {
		t.Sweep(now)
	}
	l.lockout.Sweep(now)
}

// tooManyPasswordChecks is the 429 of a client past its password checks.
func tooManyPasswordChecks(retryAfterSeconds int) *apiError {
	return &apiError{status: fasthttp.StatusTooManyRequests, code: "password_checks_limited",
		msg: "Too many password attempts from this client, retry later", retryAfterSeconds: retryAfterSeconds}
}

// once applies an hourly or per-minute count that is not a request window:
// it sets no X-RateLimit headers, and answers over the limit with over.
// A negative limit is no limit.
func (s *Server) once(t *ratelimit.Limiter, k ratelimit.Key, limit int, over func(int) *apiError) error {
	if limit < 0 {
		return nil
	}
	d := t.Allow(k, limit, s.now())
	switch {
	case d.Full:
		return tooManyClients(d.RetryAfterSeconds())
	case !d.Allowed:
		return over(d.RetryAfterSeconds())
	}
	return nil
}

// allowPasswordCheck counts a password check of the client at addr, or of
// the device cookie when device is set: a login with a device cookie is
// counted apart from its address, so that others behind the same address
// cannot use up its checks.
func (s *Server) allowPasswordCheck(addr netip.Addr, device [16]byte, hasDevice bool) error {
	if hasDevice {
		return s.once(s.lim.deviceChecks, ratelimit.Key{Kind: ratelimit.KindDevice, ID: device},
			s.cfg.PasswordChecksPerMinute, tooManyPasswordChecks)
	}
	return s.once(s.lim.passwordChecks, ratelimit.IPKey(addr), s.cfg.PasswordChecksPerMinute, tooManyPasswordChecks)
}

// allowRegistration counts a sign-up from addr.
func (s *Server) allowRegistration(addr netip.Addr) error {
	return s.once(s.lim.registrations, ratelimit.IPKey(addr), s.cfg.RegistrationsPerHour, func(retry int) *apiError {
		return &apiError{status: fasthttp.StatusTooManyRequests, code: "registration_limited",
			msg: "Too many registrations from this address, retry later", retryAfterSeconds: retry}
	})
}

// allowKeyChange counts a key creation or rotation of account.
func (s *Server) allowKeyChange(account uuid.UUID) error {
	return s.once(s.lim.keyChanges, ratelimit.Key{Kind: ratelimit.KindAccount, ID: account}, s.cfg.KeyChangesPerHour,
		func(retry int) *apiError {
			return &apiError{status: fasthttp.StatusTooManyRequests, code: "key_changes_limited",
				msg: "Too many key creations and rotations, retry later", retryAfterSeconds: retry}
		})
}
