package wire

import (
	"encoding/json"
	"testing"
	"time"
)

// TestTimestampJSON: a timestamp is written as RFC 3339 in UTC with a Z,
// read back to the same nanosecond; null leaves it as it was, and what is
// not a time is refused.
func TestTimestampJSON(t *testing.T) {
	for _, c := range []struct {
		name  string
		nanos int64
		json  string
	}{
		{"epoch", 0, `"1970-01-01T00:00:00Z"`},
		{"whole second", time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano(), `"2030-01-02T03:04:05Z"`},
		{"fraction", time.Date(2030, 1, 2, 3, 4, 5, 120_000_000, time.UTC).UnixNano(), `"2030-01-02T03:04:05.12Z"`},
		{"nanosecond", time.Date(2030, 1, 2, 3, 4, 5, 1, time.UTC).UnixNano(), `"2030-01-02T03:04:05.000000001Z"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(Timestamp(c.nanos))
			if err != nil || string(b) != c.json {
				t.Fatalf("Marshal(%d) = %s, %v; want %s", c.nanos, b, err, c.json)
			}
			var got Timestamp
			if err := json.Unmarshal(b, &got); err != nil || int64(got) != c.nanos {
				t.Fatalf("Unmarshal(%s) = %d, %v; want %d", b, got, err, c.nanos)
			}
		})
	}
	kept := Timestamp(42)
	if err := json.Unmarshal([]byte("null"), &kept); err != nil || kept != 42 {
		t.Errorf("Unmarshal(null) = %d, %v; want 42 kept", kept, err)
	}
	for _, bad := range []string{`"yesterday"`, `12`, `"2030-01-02"`, `"9999-01-01T00:00:00Z"`} {
		var ts Timestamp
		if err := json.Unmarshal([]byte(bad), &ts); err == nil {
			t.Errorf("Unmarshal(%s) = %d, nil; want an error", bad, ts)
		}
	}
}

// FuzzTimestampUnmarshal: any bytes are refused or read as the instant
// they name, which is written back and read again unchanged.
func FuzzTimestampUnmarshal(f *testing.F) {
	for _, s := range []string{`"2030-01-02T03:04:05.12Z"`, `"1970-01-01T00:00:00Z"`, `null`, `"2030-01-02T03:04:05+02:00"`, `""`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var ts Timestamp
		if err := ts.UnmarshalJSON(data); err != nil {
			return
		}
		var want time.Time
		if err := want.UnmarshalJSON(data); err == nil && !want.IsZero() && !time.Unix(0, int64(ts)).Equal(want) {
			t.Fatalf("%q read as %d, not the instant %v", data, ts, want)
		}
		b, err := json.Marshal(ts)
		if err != nil {
			t.Fatalf("Marshal(%d) after Unmarshal(%q): %v", ts, data, err)
		}
		var again Timestamp
		if err := json.Unmarshal(b, &again); err != nil || again != ts {
			t.Fatalf("%q read as %d, written %s, read again as %d, %v", data, ts, b, again, err)
		}
	})
}
