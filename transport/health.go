package transport

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"marketd/core"
)

// Phase is where a server is in its life; it decides the answers of
// /readyz and whether the API routes serve (docs/API.md, "Health").
type Phase int32

// The phases, in the order a process goes through them. A server goes
// forward only: a draining or failed server never serves again.
const (
	// PhaseRecovering: the listener is open but the engine is still being
	// recovered; every API route answers 503 Recovering.
	PhaseRecovering Phase = iota
	// PhaseServing: every route serves; /readyz is 200 while the log
	// accepts writes.
	PhaseServing
	// PhaseDraining: a stop was asked for; routes still serve the requests
	// that arrive while the process stops, but /readyz is 503 so that load
	// balancers send no more.
	PhaseDraining
	// PhaseFailed: the log failed, so memory may hold changes that never
	// became durable; every API route answers 503 until the process exits
	// and its supervisor restarts it.
	PhaseFailed
	numPhases
)

var phaseNames = [numPhases]string{"recovering", "serving", "draining", "failed"}

// String returns the phase's name, as in marketd_phase's label.
func (p Phase) String() string {
	if p >= 0 && p < numPhases {
		return phaseNames[p]
	}
	return "unknown"
}

// The answers of the gate and /readyz while the server does not serve.
var (
	errRecovering = newError(fasthttp.StatusServiceUnavailable, "recovering", "Recovering")
	errDraining   = newError(fasthttp.StatusServiceUnavailable, "draining", "Draining")
	errLogFailed  = newError(fasthttp.StatusServiceUnavailable, "log_failed", "Log failed")
)

// Phase returns the server's phase.
func (s *Server) Phase() Phase { return Phase(s.phase.Load()) }

// Attach gives a server made by New with a nil engine the engine recovery
// built; the routes keep answering 503 Recovering until Open, so that
// start-up work (the admin account) can use the engine first.
func (s *Server) Attach(eng *core.Engine) {
	if s.eng != nil || eng == nil {
		panic("BUG: transport: Attach needs a server without an engine and an engine")
	}
	// Handlers read eng only after they load the phase that Open stores
	// after this, so they see it set.
	s.eng = eng
}

// Open lets every route serve; the engine must be attached.
func (s *Server) Open() {
	if s.eng == nil {
		panic("BUG: transport: Open before Attach")
	}
	s.phase.CompareAndSwap(int32(PhaseRecovering), int32(PhaseServing))
}

// Drain makes /readyz answer 503 Draining while the process stops; routes
// keep serving. A server still recovering stays so: its routes have no
// engine to serve with.
func (s *Server) Drain() {
	s.phase.CompareAndSwap(int32(PhaseServing), int32(PhaseDraining))
}

// Fail marks the log failed: /readyz and every API route answer 503 Log
// failed from now on.
func (s *Server) Fail() { s.phase.Store(int32(PhaseFailed)) }

// gate answers 503 for an API route when the server does not serve; it
// returns whether the route may run.
func (s *Server) gate(ctx *fasthttp.RequestCtx) bool {
	if s.stopping.Load() && Phase(s.phase.Load()) != PhaseFailed {
		// The answer of an engine that has stopped: 503 shutting_down.
		s.fail(ctx, core.ErrClosed)
		return false
	}
	switch Phase(s.phase.Load()) {
	case PhaseServing, PhaseDraining:
		// From the moment the log fails, before the process marks the
		// server failed: a read must not show a change that the restart
		// will not have.
		if s.cfg.LogErr != nil && s.cfg.LogErr() != nil {
			s.fail(ctx, errLogFailed)
			return false
		}
		return true
	case PhaseRecovering:
		s.fail(ctx, errRecovering)
	default:
		s.fail(ctx, errLogFailed)
	}
	return false
}

// notReady returns why the server is not ready, or nil when it is: it has
// recovered, is not draining, and its log accepts writes.
func (s *Server) notReady() *apiError {
	switch Phase(s.phase.Load()) {
	case PhaseRecovering:
		return errRecovering
	case PhaseDraining:
		return errDraining
	case PhaseFailed:
		return errLogFailed
	}
	if s.cfg.LogErr != nil && s.cfg.LogErr() != nil {
		return errLogFailed
	}
	return nil
}

type statusBody struct {
	Status string `json:"status"`
}

// healthz answers 200 while the process serves HTTP at all: a liveness
// check, in every phase.
func (s *Server) healthz(ctx *fasthttp.RequestCtx) {
	_ = writeJSON(ctx, fasthttp.StatusOK, statusBody{Status: "ok"})
}

// readyz answers 200 when the server is ready for traffic, else 503 with
// the reason (Recovering, Draining, Log failed).
func (s *Server) readyz(ctx *fasthttp.RequestCtx) {
	if e := s.notReady(); e != nil {
		writeError(ctx, e)
		return
	}
	_ = writeJSON(ctx, fasthttp.StatusOK, statusBody{Status: "ready"})
}

// phaseCollector exports the phase as marketd_ready and marketd_phase.
type phaseCollector struct {
	s                   *Server
	readyDesc, phaseDes *prometheus.Desc
}

func newPhaseCollector(s *Server) *phaseCollector {
	return &phaseCollector{
		s: s,
		readyDesc: prometheus.NewDesc("marketd_ready",
			"1 when /readyz answers 200: recovered, not draining, the log accepting writes; else 0.", nil, nil),
		phaseDes: prometheus.NewDesc("marketd_phase",
			"1 for the server's current phase (recovering, serving, draining, failed), 0 for the others.",
			[]string{"phase"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *phaseCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.readyDesc
	ch <- c.phaseDes
}

// Collect implements prometheus.Collector.
func (c *phaseCollector) Collect(ch chan<- prometheus.Metric) {
	ready := 0.0
	if c.s.notReady() == nil {
		ready = 1
	}
	ch <- prometheus.MustNewConstMetric(c.readyDesc, prometheus.GaugeValue, ready)
	cur := c.s.Phase()
	for p := range numPhases {
		v := 0.0
		if p == cur {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.phaseDes, prometheus.GaugeValue, v, p.String())
	}
}
