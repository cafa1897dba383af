package transport

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// FuzzDeviceCookie: any cookie value is either refused or one the signer
// issued; verify never panics, and a value that verifies re-encodes to
// itself (no two spellings of one cookie).
func FuzzDeviceCookie(f *testing.F) {
	d := &deviceSigner{key: bytes.Repeat([]byte{3}, DeviceKeyBytes)}
	acct := [16]byte{1, 2, 3, 4}
	now := time.Unix(1_800_000_000, 0)
	f.Add([]byte(d.issue(acct, now)))
	f.Add([]byte(""))
	f.Add([]byte("."))
	f.Add([]byte("AAAA.BBBB"))
	f.Fuzz(func(t *testing.T, v []byte) {
		if _, ok := d.verify(v, acct, now); !ok {
			return
		}
		dot := bytes.IndexByte(v, '.')
		if dot < 0 {
			t.Fatalf("verified %q without a signature", v)
		}
		payload, err := deviceEncoding.DecodeString(string(v[:dot]))
		if err != nil || deviceEncoding.EncodeToString(payload) != string(v[:dot]) {
			t.Fatalf("verified %q whose payload is not canonical", v)
		}
		if sig := deviceEncoding.EncodeToString(d.mac(payload)); sig != string(v[dot+1:]) {
			t.Fatalf("verified %q whose signature is not canonical", v)
		}
	})
}

// FuzzClientAddr: any X-Forwarded-For from a trusted proxy yields a valid
// address, and never one of the trusted proxies unless every entry is one.
func FuzzClientAddr(f *testing.F) {
	trusted, err := ParseTrustedProxies("10.0.0.0/8")
	if err != nil {
		f.Fatal(err)
	}
	s := &Server{cfg: Config{TrustedProxies: trusted}}
	f.Add("203.0.113.9")
	f.Add("1.2.3.4, 203.0.113.9, 10.0.0.1")
	f.Add("junk, ::1")
	f.Add("")
	f.Fuzz(func(t *testing.T, xff string) {
		var req fasthttp.Request
		req.Header.Set(headerForwardedFor, xff)
		var ctx fasthttp.RequestCtx
		ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(10, 1, 1, 1), Port: 1}, nil)
		if a := s.clientAddr(&ctx); !a.IsValid() {
			t.Fatalf("X-Forwarded-For %q: invalid client address", xff)
		}
	})
}
