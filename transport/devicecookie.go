package transport

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"
)

// Device cookies (OWASP, "Slow Down Online Guessing Attacks with Device
// Cookies"; docs/API.md, "Failed logins and password hashing"): a browser
// that logs in to an account receives a cookie naming the account and a
// random device ID, signed with the server's device key. A later login to
// that account presenting it is limited by its own failures only, so that
// guesses from others cannot lock the owner out.
const (
	deviceCookie = "device"
	// DeviceKeyBytes is the length of the device cookies' signing key.
	DeviceKeyBytes = 32
	// deviceCookieTTL is how long a device cookie is honoured after it
	// was issued; each successful login issues a fresh one.
	deviceCookieTTL = 365 * 24 * time.Hour
	// devicePayloadBytes: version, account ID, device ID, issue time.
	devicePayloadBytes = 1 + 16 + 16 + 8
	deviceMACBytes     = sha256.Size
	deviceVersion      = 1
	// devicePath limits the cookie to the authentication routes: it is
	// needed nowhere else, and sent nowhere else it cannot leak.
	devicePath = "/api/auth/"
)

var deviceEncoding = base64.RawURLEncoding

// deviceSigner issues and checks device cookies with one key.
type deviceSigner struct {
	key []byte
}

// mac returns the HMAC-SHA256 of payload under the signer's key.
func (d *deviceSigner) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, d.key)
	m.Write(payload)
	return m.Sum(nil)
}

// issue returns a new cookie value for account, with a fresh device ID.
func (d *deviceSigner) issue(account uuid.UUID, now time.Time) string {
	var p [devicePayloadBytes]byte
	p[0] = deviceVersion
	copy(p[1:17], account[:])
	_, _ = rand.Read(p[17:33]) // crypto/rand.Read never fails (Go 1.24)
	binary.LittleEndian.PutUint64(p[33:], uint64(now.Unix()))
	return deviceEncoding.EncodeToString(p[:]) + "." + deviceEncoding.EncodeToString(d.mac(p[:]))
}

// verify returns the device ID of a cookie value issued by this signer to
// account and not older than deviceCookieTTL, or ok false. A
// cookie of another account, an unknown version, a bad signature or any
// malformed value is not an error: the login then counts as one without a
// cookie.
func (d *deviceSigner) verify(value []byte, account uuid.UUID, now time.Time) (id [16]byte, ok bool) {
	dot := -1
	for i, b := range value {
		if b == '.' {
			dot = i
			break
		}
	}
	if dot < 0 || len(value) > 128 {
		return id, false
	}
	var p [devicePayloadBytes]byte
	var sig [deviceMACBytes]byte
	// The lengths are checked before decoding: Decode writes as many bytes
	// as the input holds, past a fixed buffer's end otherwise.
	if deviceEncoding.DecodedLen(dot) != len(p) {
		return id, false
	}
	if n, err := deviceEncoding.Decode(p[:], value[:dot]); err != nil || n != len(p) {
		return id, false
	}
	rest := value[dot+1:]
	if deviceEncoding.DecodedLen(len(rest)) != len(sig) {
		return id, false
	}
	if n, err := deviceEncoding.Decode(sig[:], rest); err != nil || n != len(sig) {
		return id, false
	}
	if !hmac.Equal(sig[:], d.mac(p[:])) || p[0] != deviceVersion || !bytes.Equal(p[1:17], account[:]) {
		return id, false
	}
	issued := time.Unix(int64(binary.LittleEndian.Uint64(p[33:])), 0)
	if now.Sub(issued) > deviceCookieTTL || issued.After(now.Add(time.Hour)) {
		return id, false
	}
	copy(id[:], p[17:33])
	return id, true
}

// SetDeviceKey replaces the key that signs device cookies, for a server
// made before the data directory that keeps the key could be read; it must
// be called before Open. key must be DeviceKeyBytes long.
func (s *Server) SetDeviceKey(key []byte) {
	if len(key) != DeviceKeyBytes || s.Phase() != PhaseRecovering {
		panic(fmt.Sprintf("BUG: transport: SetDeviceKey with %d bytes in phase %v", len(key), s.Phase()))
	}
	s.devices.key = key
}

// setDeviceCookie sets a fresh device cookie for account on the response.
func (s *Server) setDeviceCookie(ctx *fasthttp.RequestCtx, account uuid.UUID) {
	var ck fasthttp.Cookie
	ck.SetKey(deviceCookie)
	ck.SetValue(s.devices.issue(account, s.now()))
	ck.SetHTTPOnly(true)
	ck.SetSameSite(fasthttp.CookieSameSiteStrictMode)
	ck.SetPath(devicePath)
	ck.SetMaxAge(int(deviceCookieTTL / time.Second))
	ctx.Response.Header.SetCookie(&ck)
}

// deviceOf returns the ID of the request's device cookie when it is valid
// for account.
func (s *Server) deviceOf(ctx *fasthttp.RequestCtx, account uuid.UUID) (id [16]byte, ok bool) {
	v := ctx.Request.Header.Cookie(deviceCookie)
	if len(v) == 0 {
		return id, false
	}
	return s.devices.verify(v, account, s.now())
}
