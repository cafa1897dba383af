package wire

import (
	"fmt"
	"math"
	"time"
)

// Timestamp is a time in Unix nanoseconds, written as ISO 8601 UTC with a
// Z and the fraction of a second when there is one (docs/API.md,
// "Conventions").
type Timestamp int64

// MarshalJSON writes the time as an RFC 3339 string in UTC.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 32)
	b = append(b, '"')
	b = time.Unix(0, int64(t)).UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), nil
}

// String returns the time as MarshalJSON writes it, without the quotes:
// what a client prints is what the API sent.
func (t Timestamp) String() string {
	return time.Unix(0, int64(t)).UTC().Format(time.RFC3339Nano)
}

// UnmarshalJSON reads an RFC 3339 string, as MarshalJSON writes it; a
// null leaves t as it is, as encoding/json does for its own types.
func (t *Timestamp) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	var tm time.Time
	if err := tm.UnmarshalJSON(data); err != nil {
		return fmt.Errorf("wire: timestamp %s: %w", data, err)
	}
	// UnixNano is undefined outside these (years 1678 to 2262).
	if tm.Before(time.Unix(0, math.MinInt64)) || tm.After(time.Unix(0, math.MaxInt64)) {
		return fmt.Errorf("wire: timestamp %s: out of range", data)
	}
	*t = Timestamp(tm.UnixNano())
	return nil
}

// OptionalTime is a Timestamp that is null when zero (no expiry, never
// used, not resolved).
func OptionalTime(nanos int64) *Timestamp {
	if nanos == 0 {
		return nil
	}
	t := Timestamp(nanos)
	return &t
}
