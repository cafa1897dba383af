package enum

import "testing"

type colour uint8

const (
	red   colour = 1
	green colour = 2
	blue  colour = 4
)

var colourNames = New[colour]("colour", []string{red: "red", green: "green", blue: "blue"})

// TestNames: named values print, parse back and are valid; gaps and values
// past the table are neither, and print as kind(N).
func TestNames(t *testing.T) {
	tests := []struct {
		v     colour
		name  string
		valid bool
	}{
		{0, "colour(0)", false},
		{red, "red", true},
		{green, "green", true},
		{3, "colour(3)", false},
		{blue, "blue", true},
		{5, "colour(5)", false},
		{255, "colour(255)", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := colourNames.Name(tc.v); got != tc.name {
				t.Errorf("Name(%d) = %q, want %q", tc.v, got, tc.name)
			}
			if got := colourNames.Valid(tc.v); got != tc.valid {
				t.Errorf("Valid(%d) = %v, want %v", tc.v, got, tc.valid)
			}
			v, ok := colourNames.Parse(tc.name)
			if ok != tc.valid || (ok && v != tc.v) {
				t.Errorf("Parse(%q) = %d, %v; want %d, %v", tc.name, v, ok, tc.v, tc.valid)
			}
		})
	}
	if v, ok := colourNames.Parse(""); ok {
		t.Errorf("Parse(\"\") = %d, true; want no value", v)
	}
	var zero Names[colour]
	if zero.Valid(0) || zero.Name(1) != "(1)" {
		t.Errorf("the zero Names: Valid(0) = %v, Name(1) = %q", zero.Valid(0), zero.Name(1))
	}
}
