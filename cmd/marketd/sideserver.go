package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// sideServer is the -metrics-addr listener: /metrics and /debug/pprof/ on
// a net/http server of their own, so that an operator can keep both off
// the public port. pprof is never served on the main listener.
type sideServer struct {
	srv  *http.Server
	done chan error
}

// Limits of the side server: its clients are Prometheus and an operator's
// go tool pprof, whose CPU profile takes 30 s by default.
const (
	sideReadTimeout  = 10 * time.Second
	sideWriteTimeout = 2 * time.Minute
	sideHeaderBytes  = 16 << 10
)

// startSideServer listens on addr and serves the metrics of g and the
// profiles.
func startSideServer(addr string, g prometheus.Gatherer, logger *slog.Logger) (*sideServer, error) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(logger.Handler(), slog.LevelError),
		ErrorHandling: promhttp.ContinueOnError,
	}))
	// Registered on this mux only: importing net/http/pprof also adds them
	// to http.DefaultServeMux, which nothing here serves.
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on -metrics-addr %s: %w", addr, err)
	}
	s := &sideServer{
		srv: &http.Server{Handler: mux, ReadTimeout: sideReadTimeout, WriteTimeout: sideWriteTimeout,
			MaxHeaderBytes: sideHeaderBytes, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)},
		done: make(chan error, 1),
	}
	logger.Info("metrics listening", "addr", ln.Addr().String())
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// shutdown stops the side server, waiting for its requests in flight.
func (s *sideServer) shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("metrics server: %w", err)
	}
	return nil
}
