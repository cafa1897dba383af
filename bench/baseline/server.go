package baseline

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/valyala/fasthttp"

	"marketd/transport"
)

// Server is a fasthttp server of one baseline handler, serving until
// Close.
type Server struct {
	name   string
	srv    *fasthttp.Server
	ln     net.Listener
	addr   string
	served chan error
	// release runs after the server's shutdown: it frees what the handler
	// holds (the fsync-only handler's writer and file).
	release func() error
}

// Addr returns the host:port the server listens on.
func (s *Server) Addr() string { return s.addr }

// Name returns the handler's name: "noop", "fsync-only" or "least-trade".
func (s *Server) Name() string { return s.name }

// Close shuts the server down, waiting for the requests in flight until
// ctx is done, then releases what the handler holds.
//
// It also closes the listener itself: fasthttp's shutdown closes only the
// listeners Serve has registered, and does nothing when the serving
// goroutine has not run yet, which would then serve on forever while
// Close waited for it (TestCloseRightAfterServe). A listener closed
// first makes that Serve return at once.
func (s *Server) Close(ctx context.Context) error {
	var errs []error
	if err := s.srv.ShutdownWithContext(ctx); err != nil {
		errs = append(errs, fmt.Errorf("baseline: shut down the %s server: %w", s.name, err))
	}
	if err := s.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		errs = append(errs, fmt.Errorf("baseline: close the %s server's listener: %w", s.name, err))
	}
	if err := <-s.served; err != nil {
		errs = append(errs, fmt.Errorf("baseline: %s server: %w", s.name, err))
	}
	if s.release != nil {
		if err := s.release(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Serve serves handler on ln until Close. The server's limits are those of
// marketd's transport server, so that only the handler differs from
// marketd's; the benchmarks serve their own bounds (as the log-only
// handler) through it.
func Serve(ln net.Listener, name string, handler fasthttp.RequestHandler) *Server {
	return serve(ln, name, handler, nil)
}

// serve serves handler on ln. The server's limits are those of marketd's
// transport server (transport.NewHTTPServer), so that only the handler
// differs from marketd's.
func serve(ln net.Listener, name string, handler fasthttp.RequestHandler, release func() error) *Server {
	s := &Server{
		name:    name,
		srv:     transport.NewHTTPServer(name, handler, transport.DefaultMaxBodyBytes),
		ln:      ln,
		addr:    ln.Addr().String(),
		served:  make(chan error, 1),
		release: release,
	}
	go func() { s.served <- s.srv.Serve(ln) }()
	return s
}
