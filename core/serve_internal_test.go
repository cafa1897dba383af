package core

import (
	"strings"
	"testing"
)

// TestServeAnswersAPanickingCommand: a handler's panic on a market's
// goroutine (here an unknown op) answers the command being handled with a
// BUG error before the panic goes on, as the recovery deferred once per
// loop in serve promises; the next command is never taken.
func TestServeAnswersAPanickingCommand(t *testing.T) {
	m := &market{inbox: make(chan *command, 2)}
	m.info.Status = StatusActive
	bad := newCommand()
	next := newCommand()
	m.inbox <- bad
	m.inbox <- next
	var panicked any
	func() {
		defer func() { panicked = recover() }()
		(&Engine{}).serve(m, &scratch{})
	}()
	if panicked == nil {
		t.Fatal("serve returned without panicking on an unknown op")
	}
	select {
	case err := <-bad.done:
		if err == nil || !strings.Contains(err.Error(), "BUG: market") {
			t.Fatalf("the panicking command was answered %v", err)
		}
	default:
		t.Fatal("the panicking command was not answered")
	}
	if len(m.inbox) != 1 {
		t.Fatalf("%d commands left in the inbox, want the one after the panic", len(m.inbox))
	}
}
