package transport

import "sync"

// requestPool reuses one kind of object that lives for one request only,
// so that a trade request allocates none of them: the caller (208 bytes)
// and the trade body (224 bytes) were two of a trade request's three
// allocations, and with the collector's headroom (cmd/marketd,
// -gc-headroom-mib) every allocation is fresh memory the server must
// fault in and clear (docs/PERFORMANCE.md, "The caller's wake-up and what
// a trade request allocates"). put zeroes the object, so that a pooled one
// keeps nothing of its request alive. Whoever calls get must not keep the
// object, or anything pointing into it, past the put.
type requestPool[T any] struct{ p sync.Pool }

// get returns a zero T, reused when one was put back.
func (rp *requestPool[T]) get() *T {
	if v, ok := rp.p.Get().(*T); ok {
		return v
	}
	return new(T)
}

// put zeroes v and keeps it for a later get.
func (rp *requestPool[T]) put(v *T) {
	var zero T
	*v = zero
	rp.p.Put(v)
}
