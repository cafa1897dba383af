// Package sweep drops the expired entries of the maps that clients fill
// (rate-limit windows, failed-login counters) and gives back the memory
// of a map that has emptied: a Go map never shrinks, so one burst of
// clients would otherwise hold its memory for good.
package sweep

// Expired deletes the entries of m for which expired reports true, and
// returns the map to keep, its new peak and how many entries it dropped.
// peak is the largest size m has had; when entries were dropped and m is
// down to a quarter of peak, the entries left are copied into a map of
// their own size, which is returned with its size as the peak. The caller
// holds whatever lock guards m.
func Expired[K comparable, V any](m map[K]V, peak int, expired func(V) bool) (kept map[K]V, newPeak, dropped int) {
	before := len(m)
	for k, v := range m {
		if expired(v) {
			delete(m, k)
		}
	}
	dropped = before - len(m)
	if dropped == 0 || len(m) > peak/4 {
		return m, peak, dropped
	}
	// maps.Clone would copy the table at its old size.
	kept = make(map[K]V, len(m))
	for k, v := range m {
		kept[k] = v
	}
	return kept, len(kept), dropped
}
