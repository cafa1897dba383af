package core

import (
	"fmt"
	"testing"
)

// TestKindNames: kind names are unique and String returns them; a kind
// without one prints its number.
func TestKindNames(t *testing.T) {
	seen := map[string]Kind{}
	for k, name := range kindNames {
		if other, dup := seen[name]; dup {
			t.Errorf("kinds %d and %d are both named %q", k, other, name)
		}
		seen[name] = k
		if got := k.String(); got != name {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, name)
		}
	}
	if got, want := Kind(99).String(), fmt.Sprintf("kind(%d)", 99); got != want {
		t.Errorf("an unknown kind prints %q, want %q", got, want)
	}
}
