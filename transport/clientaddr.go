package transport

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"

	"github.com/valyala/fasthttp"
)

// headerForwardedFor is the header through which a proxy names the
// client it forwards for.
const headerForwardedFor = "X-Forwarded-For"

// ParseTrustedProxies parses a comma-separated list of CIDR prefixes (or
// bare addresses, taken as /32 or /128), as -trusted-proxies gives it.
// An empty list trusts no proxy.
func ParseTrustedProxies(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !strings.Contains(f, "/") {
			a, err := netip.ParseAddr(f)
			if err != nil {
				return nil, fmt.Errorf("trusted proxy %q: %w", f, err)
			}
			a = a.Unmap()
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: %w", f, err)
		}
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// trusted reports whether a is one of the configured proxies.
func (s *Server) trusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientAddr returns the address of the client a request comes from: the
// connection's peer, unless the peer is a trusted proxy
// (Config.TrustedProxies); then the right-most address of X-Forwarded-For
// that is not itself a trusted proxy. Only the right-most entries can be
// believed: each trusted proxy appends the peer it saw, while anything to
// the left of the first untrusted entry was written by the client itself.
// A malformed entry ends the walk at the last address believed.
func (s *Server) clientAddr(ctx *fasthttp.RequestCtx) netip.Addr {
	peer, _ := netip.AddrFromSlice(ctx.RemoteIP())
	peer = peer.Unmap()
	if len(s.cfg.TrustedProxies) == 0 || !s.trusted(peer) {
		return peer
	}
	client := peer
	// Several X-Forwarded-For headers are one list in order (RFC 9110
	// section 5.3); walk them from the last.
	var lists [][]byte
	lists = append(lists, ctx.Request.Header.PeekAll(headerForwardedFor)...)
	for i := len(lists) - 1; i >= 0; i-- {
		entries := bytes.Split(lists[i], []byte{','})
		for j := len(entries) - 1; j >= 0; j-- {
			a, err := netip.ParseAddr(string(bytes.TrimSpace(entries[j])))
			if err != nil {
				return client
			}
			client = a.Unmap()
			if !s.trusted(client) {
				return client
			}
		}
	}
	return client
}
