// Package enum maps the values of a small enumeration (a uint8 type and its
// constants, such as core's sides, statuses and ledger entry types, whose
// values are written to disk) to their names and back, from one table per
// type, so that each type's String, Valid and Parse agree by construction.
package enum

import "fmt"

// Names is the name table of the enumeration T. The zero Names knows no
// value.
type Names[T ~uint8] struct {
	kind  string   // the type's name in the text of a value without a name
	names []string // names[v] is the name of v; "" where v has none
}

// New returns the table of T whose value v is named names[v]; "" marks a
// value without a name (a gap, such as 0 where the values start at 1).
// kind names the type in the text of such a value: kind(N).
func New[T ~uint8](kind string, names []string) Names[T] {
	return Names[T]{kind: kind, names: names}
}

// Name returns the name of v, or "kind(N)" for a value without one.
func (n Names[T]) Name(v T) string {
	if n.Valid(v) {
		return n.names[v]
	}
	return fmt.Sprintf("%s(%d)", n.kind, uint8(v))
}

// Valid reports whether v has a name.
func (n Names[T]) Valid(v T) bool { return int(v) < len(n.names) && n.names[v] != "" }

// Parse returns the value named name.
func (n Names[T]) Parse(name string) (T, bool) {
	if name == "" {
		return 0, false
	}
	for v, s := range n.names {
		if s == name {
			return T(v), true
		}
	}
	return 0, false
}
