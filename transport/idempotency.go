package transport

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
)

// The headers of idempotent requests (docs/API.md, "Idempotent requests").
const (
	HeaderIdempotencyKey = "Idempotency-Key"
	HeaderReplayed       = "Idempotent-Replayed"
)

// headerIdempotencyKey is HeaderIdempotencyKey as fasthttp's canonical key,
// for a lookup without normalizing the name.
var headerIdempotencyKey = []byte(HeaderIdempotencyKey)

// Limits of requests waiting behind one in flight with the same key.
const (
	// inFlightWait is how long a repeat waits for the first request of its
	// key to be answered before it gets 409: longer than the first can
	// take unless the server is failing.
	inFlightWait = 10 * time.Second
	// maxInFlightKeys bounds the keys in flight at once, all accounts
	// together; past it a request with a key gets 503.
	maxInFlightKeys = 1 << 16
)

var (
	errIdemNotSupported = newError(fasthttp.StatusBadRequest, "idempotency_not_supported",
		"Idempotency-Key is not accepted on this endpoint")
	errIdemInvalid = newError(fasthttp.StatusBadRequest, "invalid_idempotency_key",
		"Idempotency-Key must be 1 to 255 printable ASCII characters")
	errIdemReused = newError(fasthttp.StatusUnprocessableEntity, "idempotency_key_reused",
		"Idempotency-Key reused with a different request")
	errIdemInFlight = newError(fasthttp.StatusConflict, "idempotency_key_in_flight",
		"A request with this Idempotency-Key is still in progress")
	errIdemBusy = &apiError{status: fasthttp.StatusServiceUnavailable, code: "idempotency_busy",
		msg: "Too many idempotent requests in progress, retry later", retryAfterSeconds: 1}
	errIdemNotFound = newError(fasthttp.StatusNotFound, "idempotency_key_not_found", "Idempotency-Key not found")
)

// idemSupport says what a route does with an Idempotency-Key.
type idemSupport uint8

const (
	// idemIgnored: reads and quotes, which change nothing, ignore the
	// header.
	idemIgnored idemSupport = iota
	// idemRefused: the header is refused with 400: the routes whose
	// answer holds a secret or sets a cookie (register, login, logout,
	// password change, key create and rotate), which must never be stored,
	// and admin backup, which writes no record (docs/API.md, "Idempotent
	// requests").
	idemRefused
	// idemStored: the route stores its answer under the key: trades,
	// split-merges and batches by their own compact answers, every other
	// route with an answerFunc in the route table by the generic path.
	idemStored
)

// idemSupportOf returns what rt does with an Idempotency-Key.
func idemSupportOf(rt *route) idemSupport {
	switch {
	case rt.method == fasthttp.MethodGet || rt.path == pathQuote:
		return idemIgnored
	case rt.method == fasthttp.MethodPost && (rt.path == pathTrade || rt.path == pathSplitMerge || rt.path == pathBatch):
		return idemStored
	case rt.answer != nil:
		return idemStored
	default:
		return idemRefused
	}
}

// idemRequest is a request's Idempotency-Key with its fingerprint, and
// its place among the requests in flight.
type idemRequest struct {
	key  string
	fp   [32]byte
	slot inFlightKey
	done chan struct{} // nil once released
}

// core returns the core's form of the key, for item index of a batch.
func (r *idemRequest) core(index int) core.Idempotent {
	return core.Idempotent{Key: r.key, Fingerprint: r.fp, Index: uint32(index)}
}

// validIdempotencyKey reports whether k has the form of a key: 1 to
// MaxIdempotencyKeyBytes bytes of printable ASCII, space to tilde.
func validIdempotencyKey(k []byte) bool {
	if len(k) == 0 || len(k) > core.MaxIdempotencyKeyBytes {
		return false
	}
	for _, c := range k {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// fingerprint identifies a request: its method, its route and its body,
// byte for byte. A repeat must send the same bytes (docs/API.md). It is
// the SHA-256 of the route and the body's SHA-256, which needs no buffer
// on the heap (sha256.New allocates).
func fingerprint(rt *route, body []byte) [32]byte {
	var buf [128]byte
	b := append(buf[:0], rt.method...)
	b = append(b, 0)
	b = append(b, rt.path...)
	b = append(b, 0)
	sum := sha256.Sum256(body)
	return sha256.Sum256(append(b, sum[:]...))
}

// inFlight holds the keys whose first request is being answered, so that a
// concurrent repeat waits for that answer instead of running twice across
// markets. Keys are spread over shards by account, so that requests of
// different accounts do not wait on one lock.
type inFlight struct {
	shards [inFlightShards]inFlightShard
}

const inFlightShards = 64

type inFlightShard struct {
	mu   sync.Mutex
	keys map[inFlightKey]chan struct{} // closed when the request is answered; guarded by mu
}

type inFlightKey struct {
	account uuid.UUID
	key     string
}

// acquire makes the caller the one request in flight with k, waiting up to
// inFlightWait for another to be answered; release(k, done) must be called
// once the request is answered.
func (f *inFlight) acquire(ctx context.Context, k inFlightKey) (done chan struct{}, err error) {
	sh := &f.shards[k.account[0]%inFlightShards]
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		sh.mu.Lock()
		if sh.keys == nil {
			sh.keys = make(map[inFlightKey]chan struct{})
		}
		ch, busy := sh.keys[k]
		if !busy {
			if len(sh.keys) >= maxInFlightKeys/inFlightShards {
				sh.mu.Unlock()
				return nil, errIdemBusy
			}
			done := make(chan struct{})
			sh.keys[k] = done
			sh.mu.Unlock()
			return done, nil
		}
		sh.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(inFlightWait)
		}
		select {
		case <-ch:
		case <-timer.C:
			return nil, errIdemInFlight
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// release ends k's request in flight, acquired as done, and wakes the
// requests waiting for it.
func (f *inFlight) release(k inFlightKey, done chan struct{}) {
	sh := &f.shards[k.account[0]%inFlightShards]
	sh.mu.Lock()
	delete(sh.keys, k)
	sh.mu.Unlock()
	close(done)
}

// idempotency runs before an idempotent route's handler: it parses the
// key, waits for a request in flight with it, and answers a repeat from
// its stored entries (replay), in which case done is true. Otherwise it
// returns the key, nil without one; the caller releases it (s.release)
// once answered.
func (s *Server) idempotency(ctx *fasthttp.RequestCtx, rt *route, c *caller) (req *idemRequest, done bool, err error) {
	h := ctx.Request.Header.PeekCanonical(headerIdempotencyKey)
	if h == nil {
		return nil, false, nil
	}
	if !validIdempotencyKey(h) {
		return nil, false, errIdemInvalid
	}
	req = &idemRequest{key: string(h), fp: fingerprint(rt, ctx.PostBody())}
	req.slot = inFlightKey{c.account, req.key}
	if req.done, err = s.inflight.acquire(ctx, req.slot); err != nil {
		return nil, false, err
	}
	entries, err := s.eng.Idempotent(ctx, c.account, req.key)
	if err != nil {
		s.release(req)
		return nil, false, err
	}
	if len(entries) == 0 {
		return req, false, nil
	}
	if entries[0].Fingerprint != req.fp {
		s.release(req)
		return nil, false, errIdemReused
	}
	if rt.path == pathBatch {
		// A batch with some items stored runs the rest (batch.go),
		// still holding the key.
		return req, false, nil
	}
	s.release(req)
	return nil, true, writeReplay(ctx, entries)
}

// release ends req's time in flight; nil does nothing.
func (s *Server) release(req *idemRequest) {
	if req != nil && req.done != nil {
		s.inflight.release(req.slot, req.done)
		req.done = nil
	}
}

// writeReplay answers with the stored answer of a single request.
func writeReplay(ctx *fasthttp.RequestCtx, entries []core.IdemEntry) error {
	e := entries[0]
	body, err := renderStored(e.Answer)
	if err != nil {
		return err
	}
	ctx.SetStatusCode(int(e.Status))
	ctx.SetContentType(contentTypeJSON)
	ctx.Response.Header.Set(HeaderReplayed, "true")
	ctx.SetBody(body)
	return nil
}

// idemFailure answers the failure of an idempotent operation: when core
// found the key's answer already stored (by a request that got there
// first), the stored answer; else the error.
func (s *Server) idemFailure(ctx *fasthttp.RequestCtx, c *caller, err error) error {
	if !errors.Is(err, core.ErrIdempotencyReplay) {
		return err
	}
	entries, lerr := s.eng.Idempotent(ctx, c.account, c.idem.key)
	if lerr != nil {
		return lerr
	}
	if len(entries) == 0 {
		return fmt.Errorf("transport: stored answer of a replayed key gone: %w", err)
	}
	return writeReplay(ctx, entries)
}
