package strictjson_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"marketd/transport/strictjson"
)

// wantError checks that err is nil when reason is empty, else a
// *strictjson.Error for field with that reason.
func wantError(t *testing.T, call string, err error, field, reason string) {
	t.Helper()
	var e *strictjson.Error
	switch {
	case reason == "" && err != nil:
		t.Errorf("%s = %v, want nil", call, err)
	case reason != "" && (!errors.As(err, &e) || e.Field != field || e.Reason != reason):
		t.Errorf("%s = %v, want *strictjson.Error %q", call, err, field+": "+reason)
	}
}

func TestRunes(t *testing.T) {
	tests := []struct {
		name     string
		s        string
		min, max int
		reason   string
	}{
		{"ascii within", "bot", 1, 3, ""},
		{"multibyte counted as characters", "日本語", 1, 3, ""},
		{"emoji counted as one", "🚀🚀", 2, 2, ""},
		{"combining mark counted apart", "e\u0301", 2, 2, ""},
		{"over by one character", "日本語!", 1, 3, "must be at most 3 characters"},
		{"empty required", "", 1, 3, "is required"},
		{"empty optional", "", 0, 3, ""},
		{"too short", "ab", 3, 10, "must be at least 3 characters"},
		{"too short in characters, long in bytes", "日本", 3, 10, "must be at least 3 characters"},
		{"long", strings.Repeat("é", 1001), 0, 1000, "must be at most 1000 characters"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := strictjson.Runes("name", tc.s, tc.min, tc.max)
			wantError(t, "Runes("+tc.s+")", err, "name", tc.reason)
		})
	}
}

func TestUUID(t *testing.T) {
	const canonical = "0b5e7c3a-4f1d-4c8e-9a7b-2d6f8e1c3b5a"
	want := uuid.MustParse(canonical)
	tests := []struct {
		name   string
		s      string
		reason string
	}{
		{"canonical", canonical, ""},
		{"upper case", strings.ToUpper(canonical), ""},
		{"empty", "", "is required"},
		{"braces", "{" + canonical + "}", "must be a UUID"},
		{"urn", "urn:uuid:" + canonical, "must be a UUID"},
		{"no hyphens", strings.ReplaceAll(canonical, "-", ""), "must be a UUID"},
		{"hyphen moved", "0b5e7c3a4-f1d-4c8e-9a7b-2d6f8e1c3b5a", "must be a UUID"},
		{"not hex", "0b5e7c3a-4f1d-4c8e-9a7b-2d6f8e1c3b5g", "must be a UUID"},
		{"short", canonical[:35], "must be a UUID"},
		{"space padded", " " + canonical[1:], "must be a UUID"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, err := strictjson.UUID("market_id", tc.s)
			wantError(t, "UUID("+tc.s+")", err, "market_id", tc.reason)
			if err == nil && id != want {
				t.Errorf("UUID(%q) = %v, want %v", tc.s, id, want)
			}
		})
	}
}

func TestOneOf(t *testing.T) {
	tests := []struct {
		name   string
		s      string
		reason string
	}{
		{"first", "yes", ""},
		{"second", "no", ""},
		{"empty", "", "is required"},
		{"case differs", "Yes", `must be one of "yes", "no"`},
		{"unknown", "maybe", `must be one of "yes", "no"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := strictjson.OneOf("side", tc.s, "yes", "no")
			wantError(t, "OneOf("+tc.s+")", err, "side", tc.reason)
		})
	}
}
