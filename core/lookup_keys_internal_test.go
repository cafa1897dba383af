package core

import (
	"strings"
	"testing"
)

// TestNameKeys: names are keyed ignoring case, the longest valid name fits,
// and a longer one is refused rather than cut to a valid name's key.
func TestNameKeys(t *testing.T) {
	longest := strings.Repeat("a", MaxNameLen)
	for _, c := range []struct {
		a, b   string
		same   bool
		aFits  bool
		reason string
	}{
		{"Alice", "alice", true, true, "case is ignored"},
		{"ALICE_-9", "alice_-9", true, true, "case is ignored, other characters kept"},
		{"alice", "alice2", false, true, "a longer name is another name"},
		{"ali", "alice", false, true, "a prefix is another name"},
		{longest, strings.ToUpper(longest), true, true, "the longest valid name fits"},
		{longest + "a", longest, false, false, "a name over the bound matches nothing"},
		{"alice\x00", "alice", false, false, "a zero byte is not padding: the name matches nothing"},
		{"ali\x00ce", "ali", false, false, "a zero byte inside matches nothing"},
	} {
		ka, okA := nameKeyOf(c.a)
		kb, okB := nameKeyOf(c.b)
		if okA != c.aFits {
			t.Errorf("%s: nameKeyOf(%q) fits %v, want %v", c.reason, c.a, okA, c.aFits)
		}
		if same := okA && okB && ka == kb; same != c.same {
			t.Errorf("%s: keys of %q and %q equal %v, want %v", c.reason, c.a, c.b, same, c.same)
		}
	}
	for _, c := range []struct {
		code string
		ok   bool
	}{{"ABCDEFGH", true}, {"", false}, {"ABCDEFG", false}, {"ABCDEFGHI", false}} {
		if k, ok := codeKeyOf(c.code); ok != c.ok || ok && string(k[:]) != c.code {
			t.Errorf("codeKeyOf(%q) = %q, %v; want ok %v", c.code, k[:], ok, c.ok)
		}
	}
}
