package transport

import (
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"marketd/transport/ratelimit"
)

// DefaultMaxConnsPerClient bounds the open connections of one client
// address by default: far above what a browser or a bot opens (a handful),
// high enough that a load test of 1,024 connections from one address
// still runs, and low enough that one address cannot hold the server's
// whole connection budget (fasthttp's Concurrency, 262,144).
const DefaultMaxConnsPerClient = 1024

// refuseWriteTimeout bounds the write of the refusal to a connection over
// the limit: the accept loop must not wait on a client that reads nothing.
const refuseWriteTimeout = 100 * time.Millisecond

// connRefusalBody is the error body of a connection over the limit.
const connRefusalBody = `{"error":"Too many connections from this address","code":"too_many_connections"}` + "\n"

// connRefusal is the whole answer to a connection over the limit, written
// before the request is read (there is no request yet to route or to give
// an id to), after which the connection is closed.
var connRefusal = []byte("HTTP/1.1 503 Service Unavailable\r\n" +
	"Content-Type: application/json\r\n" +
	"Retry-After: 1\r\n" +
	"Connection: close\r\n" +
	"Content-Length: " + strconv.Itoa(len(connRefusalBody)) + "\r\n" +
	"\r\n" + connRefusalBody)

// connLimiter counts the open connections per client address: an IPv4
// address, or an IPv6 /64 as the rate limits key them. The peer address is
// what is counted (X-Forwarded-For is not read before a request arrives);
// connections from trusted proxies are not counted, since a proxy carries
// many clients. Its map holds only addresses with open connections, so it
// is bounded by the connections fasthttp accepts.
type connLimiter struct {
	max     int
	trusted func(netip.Addr) bool

	mu   sync.Mutex
	open map[[16]byte]int // guarded by mu
}

// limitedListener is a net.Listener that refuses, with a 503, connections
// of an address that already has the maximum open.
type limitedListener struct {
	net.Listener
	l *connLimiter
}

// limitConns wraps ln with the per-client connection limit, unless it is
// off (a negative MaxConnsPerClient).
func (s *Server) limitConns(ln net.Listener) net.Listener {
	if s.cfg.MaxConnsPerClient < 0 {
		return ln
	}
	return &limitedListener{Listener: ln, l: &connLimiter{max: s.cfg.MaxConnsPerClient, trusted: s.trusted,
		open: make(map[[16]byte]int)}}
}

// Accept returns the next connection within the limit, refusing those
// beyond it.
func (ln *limitedListener) Accept() (net.Conn, error) {
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key, counted, ok := ln.l.admit(c.RemoteAddr())
		if ok {
			if !counted {
				return c, nil
			}
			return &countedConn{Conn: c, l: ln.l, key: key}, nil
		}
		// Errors are ignored: the connection is being dropped either way.
		_ = c.SetWriteDeadline(time.Now().Add(refuseWriteTimeout))
		_, _ = c.Write(connRefusal)
		_ = c.Close()
	}
}

// admit counts a new connection from addr, unless its address is at the
// limit (ok false). counted is false for connections not limited (trusted
// proxies, addresses that are not IP).
func (l *connLimiter) admit(addr net.Addr) (key [16]byte, counted, ok bool) {
	tcp, isTCP := addr.(*net.TCPAddr)
	if !isTCP {
		return key, false, true
	}
	ip, valid := netip.AddrFromSlice(tcp.IP)
	if !valid || l.trusted(ip) {
		return key, false, true
	}
	key = ratelimit.IPKey(ip).ID
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[key] >= l.max {
		return key, false, false
	}
	l.open[key]++
	return key, true, true
}

// release forgets one closed connection of key.
func (l *connLimiter) release(key [16]byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := l.open[key] - 1; n > 0 {
		l.open[key] = n
	} else {
		delete(l.open, key)
	}
}

// countedConn releases its count once, at its first Close.
type countedConn struct {
	net.Conn
	l    *connLimiter
	key  [16]byte
	once sync.Once
}

// Close closes the connection and releases its count.
func (c *countedConn) Close() error {
	c.once.Do(func() { c.l.release(c.key) })
	return c.Conn.Close()
}
