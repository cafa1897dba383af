package password

import (
	"fmt"
	"testing"
	"time"
)

// TestLockoutFullDeviceTable holds docs/API.md ("Failed logins and
// password hashing"): strangers who fill the device table with failures of
// their own cookies never get an owner's cookie refused, and a cookie the
// full table cannot count is still bounded, by the name's limit over its
// untracked cookies. Before, the full table refused every untracked cookie
// for 59 minutes, the owner's included.
func TestLockoutFullDeviceTable(t *testing.T) {
	l := NewLockout(DefaultLockoutLimits)
	for i := range DefaultMaxNames {
		l.Fail(Attempt{Name: fmt.Sprintf("attacker%d", i), Device: fmt.Sprintf("attacker-%d", i)}, t0)
	}
	now := t0.Add(time.Minute)
	tests := []struct {
		name        string
		a           Attempt
		fails       int // failures of a before the Check
		wantBlocked bool
	}{
		{"an owner's cookie without failures", Attempt{Name: "alice", Device: "alice-laptop"}, 0, false},
		{"an owner's cookie under the name's limit", Attempt{Name: "bob", Device: "bob-laptop"}, DefaultLockoutLimits.PerName - 1, false},
		{"an untracked cookie at the name's limit", Attempt{Name: "carol", Device: "carol-stolen"}, DefaultLockoutLimits.PerName, true},
		{"a tracked stranger at its device limit", Attempt{Name: "attacker0", Device: "attacker-0"}, DefaultLockoutLimits.PerDevice - 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range tt.fails {
				l.Fail(tt.a, now)
			}
			retry, blocked := l.Check(tt.a, now)
			if blocked != tt.wantBlocked {
				t.Fatalf("Check(%+v) after %d failures of its own, table full: (%v, %v), want blocked %v",
					tt.a, tt.fails, retry, blocked, tt.wantBlocked)
			}
		})
	}
	// Another cookie of carol's, with no failures of its own, shares the
	// name's bound over untracked cookies: the bound is per name, and only
	// holders of carol's cookies could reach it.
	if _, blocked := l.Check(Attempt{Name: "carol", Device: "carol-phone"}, now); !blocked {
		t.Errorf("a second untracked cookie of a name at its limit passed; guesses per name would be unbounded")
	}
	// Other names' cookies and logins without a cookie are unaffected.
	if retry, blocked := l.Check(Attempt{Name: "dave"}, now); blocked {
		t.Errorf("a login without a cookie refused for %v", retry)
	}
}
