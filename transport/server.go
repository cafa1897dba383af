package transport

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/router"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/core/money"
	"marketd/transport/password"
	"marketd/transport/strictjson"
)

// Defaults of Config.
const (
	DefaultMaxBodyBytes      = strictjson.MaxBodyBytes // what the decoder takes
	DefaultAnonRatePerMinute = 600
	DefaultSessionTTL        = 7 * 24 * time.Hour
	DefaultPasswordCost      = 10
	rateWindow               = time.Minute
	// sweepInterval is how often ended rate-limit windows are dropped.
	sweepInterval = time.Minute
)

// Config holds the server's settings; zero fields take their defaults
// where one is stated.
type Config struct {
	// DefaultTier is the tier of keys created without rate_limit_tier;
	// only an admin may ask for another (docs/API.md, "POST /api/keys").
	DefaultTier core.Tier
	// SignupBonus is minted to every new account (docs/API.md, "POST
	// /api/auth/register").
	SignupBonus money.Amount
	// AnonRatePerMinute limits requests without credentials per client IP;
	// negative: no limit. Default DefaultAnonRatePerMinute.
	AnonRatePerMinute int
	// MaxBodyBytes bounds request bodies (413 beyond). Default
	// DefaultMaxBodyBytes.
	MaxBodyBytes int
	// SessionTTL is how long a session lasts. Default DefaultSessionTTL.
	SessionTTL time.Duration
	// PasswordCost is the bcrypt cost; PasswordWorkers hash at once and
	// PasswordQueue more may wait (503 beyond). Defaults: DefaultPasswordCost
	// (about 85 ms a hash here), half the CPUs (so that a burst of logins
	// leaves the other half to trading), 64.
	PasswordCost    int
	PasswordWorkers int
	PasswordQueue   int
	// DepositAddress is the custody's address to which deposits are sent,
	// shown by GET /api/token/balance; "" shows null.
	DepositAddress string
	// Backup writes an online backup named name (POST /api/admin/backup);
	// nil leaves the route out. An error wrapping ErrBackupExists is
	// answered 409.
	Backup func(ctx context.Context, name string) (BackupResult, error)
	// Status reports the log's and the snapshots' positions for
	// GET /api/admin/stats; nil leaves them out.
	Status StatusSource
	// Now returns the current time; default time.Now.
	Now func() time.Time
	// Logger receives 500s with their causes and panics. Default
	// slog.Default().
	Logger *slog.Logger
	// Metrics, when set, receives the HTTP metrics and the readiness
	// gauges; nil turns every request metric off (for the benchmark that
	// measures their cost).
	Metrics prometheus.Registerer
	// ServeMetrics, when set, is served at GET /metrics on this server's
	// listener, without credentials or rate limit, like Prometheus' own
	// exporters.
	ServeMetrics prometheus.Gatherer
	// SlowRequest, when set, is told of every routed request that took
	// longer than SlowRequestAfter, from read whole to answer ready (what
	// marketd_http_request_duration_seconds measures), with its route
	// pattern: cmd/marketd's stall recorder (docs/OPERATIONS.md, "Stall
	// traces"). It runs on the request's goroutine after the answer is
	// ready, so it must not block.
	SlowRequest      func(route string, took time.Duration)
	SlowRequestAfter time.Duration
	// LogErr reports the log's sticky failure; /readyz is 503 once it
	// returns an error. Nil: never failed.
	LogErr func() error
	// AccessLog logs every answer with a status of 400 or more at info
	// (5xx are logged at error level with their cause either way).
	AccessLog bool

	// TrustedProxies are the proxies whose X-Forwarded-For names the
	// client (clientaddr.go); empty: the peer is the client.
	TrustedProxies []netip.Prefix
	// DeviceKey signs device cookies (devicecookie.go), DeviceKeyBytes
	// long; cmd/marketd keeps it in the data directory so that cookies
	// outlive a restart. Nil: a random key, good until the process ends.
	DeviceKey []byte
	// RegistrationsPerHour bounds sign-ups per client address (IPv6 per
	// /64); KeyChangesPerHour key creations and rotations per account;
	// PasswordChecksPerMinute password checks per client address. Zero:
	// the Default of each; negative: no limit.
	RegistrationsPerHour    int
	KeyChangesPerHour       int
	PasswordChecksPerMinute int
	// ClientsPerTable bounds the windows of each rate-limit table; default
	// DefaultClientsPerTable.
	ClientsPerTable int
	// Lockout holds the failed-login limits; zero: DefaultLockoutLimits.
	Lockout password.LockoutLimits
	// MaxConnsPerClient bounds the open connections of one client address
	// (IPv6 per /64; trusted proxies are not bounded); default
	// DefaultMaxConnsPerClient, negative: no limit.
	MaxConnsPerClient int
}

// StatusSource reports the durability positions shown by the admin stats.
type StatusSource interface {
	Positions() Positions
}

// Positions are the log's and the snapshots' positions.
type Positions struct {
	LogFirstSeq, LogLastSeq, LogDurableSeq uint64
	LogRecords, LogBatches, LogFsyncs      uint64
	// SnapshotFrom and SnapshotThrough are zero when no snapshot was taken.
	SnapshotFrom, SnapshotThrough uint64
	SnapshotAt                    int64
}

// Server is the HTTP front end of one Engine.
type Server struct {
	eng     *core.Engine
	cfg     Config
	log     *slog.Logger
	lim     *limits
	hasher  *password.Hasher
	devices *deviceSigner
	router  *router.Router
	// tradeRoute is the handler the router holds for POST pathTrade (route).
	tradeRoute fasthttp.RequestHandler
	http       *fasthttp.Server
	ids        *requestIDs
	metrics    *httpMetrics // nil when Config.Metrics is

	// phase is a Phase: recovering until Open, then serving until Drain
	// or Fail. eng is set before it leaves recovering and never after.
	phase atomic.Int32
	// stopping is set by Shutdown before it closes any connection: from
	// then on, API routes answer 503 shutting_down and change nothing
	// (gate).
	stopping atomic.Bool

	// inflight holds the Idempotency-Keys being answered.
	inflight inFlight

	// callers and tradeBodies are reused by every request and every
	// trade request (pools.go).
	callers     requestPool[caller]
	tradeBodies requestPool[tradeBody]

	stop    chan struct{}
	stopped sync.Once
	wg      sync.WaitGroup
}

// New returns a server for eng. Serve starts it; Shutdown stops it. With
// a nil eng the server starts in PhaseRecovering: /healthz, /readyz and
// /metrics answer, every other route 503 Recovering, until Attach gives it
// the recovered engine and Open opens the routes.
func New(eng *core.Engine, cfg Config) *Server {
	cfg = withDefaults(cfg)
	s := &Server{
		eng:     eng,
		cfg:     cfg,
		log:     cfg.Logger,
		lim:     newLimits(&cfg),
		hasher:  password.NewHasherReserve(cfg.PasswordWorkers, cfg.PasswordQueue, hashReserve, cfg.PasswordCost),
		devices: &deviceSigner{key: cfg.DeviceKey},
		stop:    make(chan struct{}),
		ids:     newRequestIDs(),
	}
	if eng != nil {
		s.phase.Store(int32(PhaseServing))
	}
	if cfg.Metrics != nil || cfg.SlowRequest != nil {
		s.metrics = newHTTPMetrics()
		s.metrics.slow, s.metrics.slowAfter = cfg.SlowRequest, cfg.SlowRequestAfter
	}
	s.router = s.newRouter()
	if cfg.Metrics != nil {
		// Registered once the router has added every route's counts, so
		// that no scrape reads the list while it grows.
		cfg.Metrics.MustRegister(s.metrics, newPhaseCollector(s))
	}
	s.http = NewHTTPServer("marketd", s.withRequestID(s.route), cfg.MaxBodyBytes)
	s.http.ErrorHandler = s.transportError
	s.http.HeaderReceived = s.headerReceived
	s.http.Logger = fasthttpLogger{s.log}
	// fasthttp's message for a header it cannot parse quotes the raw
	// header, Authorization and Cookie included: keep them out of the log.
	s.http.SecureErrorLogMessage = true
	s.wg.Add(1)
	go s.sweepLoop()
	return s
}

// NewHTTPServer returns a fasthttp server of handler with the limits of
// marketd's: the body's size, and timeouts, since a client that stalls
// mid-request or idles holds a connection and its buffers. bench/baseline
// serves its handlers with it, so that only the handler differs from
// marketd's.
func NewHTTPServer(name string, handler fasthttp.RequestHandler, maxBodyBytes int) *fasthttp.Server {
	return &fasthttp.Server{
		Handler:                      handler,
		Name:                         name,
		MaxRequestBodySize:           maxBodyBytes,
		ReadTimeout:                  30 * time.Second,
		WriteTimeout:                 30 * time.Second,
		IdleTimeout:                  2 * time.Minute,
		DisablePreParseMultipartForm: true,
		NoDefaultContentType:         true,
	}
}

func withDefaults(cfg Config) Config {
	if cfg.AnonRatePerMinute == 0 {
		cfg.AnonRatePerMinute = DefaultAnonRatePerMinute
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.PasswordCost == 0 {
		cfg.PasswordCost = DefaultPasswordCost
	}
	if cfg.PasswordWorkers <= 0 {
		// marketd makes its server while it recovers, on the count
		// without the spare processors (cmd/marketd, procs.ForRecovery):
		// half of that is half the CPUs.
		cfg.PasswordWorkers = max(1, runtime.GOMAXPROCS(0)/2)
	}
	if cfg.PasswordQueue <= 0 {
		cfg.PasswordQueue = 64
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if len(cfg.DeviceKey) == 0 {
		cfg.DeviceKey = make([]byte, DeviceKeyBytes)
		_, _ = rand.Read(cfg.DeviceKey) // never fails (crypto/rand, Go 1.24)
	}
	if cfg.RegistrationsPerHour == 0 {
		cfg.RegistrationsPerHour = DefaultRegistrationsPerHour
	}
	if cfg.KeyChangesPerHour == 0 {
		cfg.KeyChangesPerHour = DefaultKeyChangesPerHour
	}
	if cfg.PasswordChecksPerMinute == 0 {
		cfg.PasswordChecksPerMinute = DefaultPasswordChecksPerMinute
	}
	if cfg.ClientsPerTable <= 0 {
		cfg.ClientsPerTable = DefaultClientsPerTable
	}
	if cfg.Lockout == (password.LockoutLimits{}) {
		cfg.Lockout = password.DefaultLockoutLimits
	}
	if cfg.MaxConnsPerClient == 0 {
		cfg.MaxConnsPerClient = DefaultMaxConnsPerClient
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg
}

func (s *Server) now() time.Time { return s.cfg.Now() }

// Handler returns the server's request handler, for tests and benchmarks
// that serve it themselves.
func (s *Server) Handler() fasthttp.RequestHandler { return s.http.Handler }

// Serve answers requests on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	if err := s.http.Serve(s.limitConns(ln)); err != nil {
		return fmt.Errorf("transport: serve: %w", err)
	}
	return nil
}

// Shutdown stops accepting connections, waits for the requests in flight to
// be answered (or ctx to end), and stops the background work.
func (s *Server) Shutdown(ctx context.Context) error {
	// fasthttp closes the connections it sees idle, and one that has just
	// read a request may still look idle: its request would run with no
	// connection left to answer on. Refused from here, such a request
	// changes nothing; one admitted before this store runs on a connection
	// fasthttp already sees active, which it waits for (docs/API.md,
	// "Other errors").
	s.stopping.Store(true)
	err := s.http.ShutdownWithContext(ctx)
	s.stopped.Do(func() { close(s.stop) })
	s.wg.Wait()
	if err != nil {
		return fmt.Errorf("transport: shutdown: %w", err)
	}
	return nil
}

// sweepLoop drops ended rate-limit windows, so that memory follows the
// clients active in the last minute. It exits when Shutdown closes stop.
func (s *Server) sweepLoop() {
	defer s.wg.Done()
	t := time.NewTicker(sweepInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			now := s.now()
			s.lim.sweep(now)
		}
	}
}
