package transport

import (
	"strconv"
	"sync/atomic"
	"time"
)

// An answer's timestamp is RFC 3339 with nanoseconds in UTC
// (docs/API.md, "Conventions"), as time.RFC3339Nano writes it. Formatting
// the date and the time of day took about 800 of the trade answer's 5,600
// instructions (docs/PERFORMANCE.md, "The trade request's handler,
// instruction by instruction"), and every answer in one second shares
// them: so the second's text is formatted once, by the time package, and
// kept; each answer appends only its fraction.

// stampSecond is one second's text in RFC 3339, "2006-01-02T15:04:05".
type stampSecond struct {
	unix int64
	text [len(secondLayout)]byte
}

const secondLayout = "2006-01-02T15:04:05"

// lastStamp is the second of the last timestamp appended: written once a
// second, read by every answer.
var lastStamp atomic.Pointer[stampSecond]

// appendTimestamp appends the time unixNano as time.RFC3339Nano writes it
// in UTC: the fraction without its trailing zeros, none when it is zero.
// Every int64 of nanoseconds lies in the years 1677 to 2262, so the
// second's text always has secondLayout's length.
func appendTimestamp(b []byte, unixNano int64) []byte {
	sec, frac := unixNano/1e9, unixNano%1e9
	if frac < 0 {
		sec, frac = sec-1, frac+1e9
	}
	s := lastStamp.Load()
	if s == nil || s.unix != sec {
		s = &stampSecond{unix: sec}
		time.Unix(sec, 0).UTC().AppendFormat(s.text[:0], secondLayout)
		lastStamp.Store(s)
	}
	b = append(b, s.text[:]...)
	if frac != 0 {
		// 1e9+frac is "1" and the fraction's nine digits: the "1"
		// becomes the point.
		point := len(b)
		b = strconv.AppendUint(b, uint64(1e9+frac), 10)
		b[point] = '.'
		for b[len(b)-1] == '0' {
			b = b[:len(b)-1]
		}
	}
	return append(b, 'Z')
}
