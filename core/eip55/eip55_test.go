package eip55_test

import (
	"errors"
	"strings"
	"testing"

	"marketd/core/eip55"
)

// referenceVectors are the checksummed addresses of EIP-55's own test
// cases (eips.ethereum.org/EIPS/eip-55, "Test Cases").
var referenceVectors = []string{
	// All caps
	"0x52908400098527886E0F7030069857D2E4169EE7",
	"0x8617E340B3D01FA5F11F306F4090FD50E238070D",
	// All lower
	"0xde709f2102306220921060314715629080e2fb77",
	"0x27b1fdb04752bbc536007a920d24acb045561c26",
	// Normal
	"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
	"0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
	"0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
	"0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
}

func TestChecksumReferenceVectors(t *testing.T) {
	for _, want := range referenceVectors {
		t.Run(want, func(t *testing.T) {
			for _, in := range []string{want, strings.ToLower(want), "0x" + strings.ToUpper(want[2:])} {
				got, err := eip55.Parse(in)
				if err != nil {
					t.Fatalf("Parse(%q) = %v", in, err)
				}
				// The all-caps and all-lower vectors are their own checksum
				// form only by chance of their digits; compare the form.
				if got != eip55.Checksum(want[2:]) {
					t.Fatalf("Parse(%q) = %q, want %q", in, got, eip55.Checksum(want[2:]))
				}
			}
			if mixed(want) && eip55.Checksum(want[2:]) != want {
				t.Fatalf("Checksum(%q) = %q", want[2:], eip55.Checksum(want[2:]))
			}
		})
	}
}

// mixed reports whether s has both lower- and upper-case letters.
func mixed(s string) bool { return strings.ToLower(s) != s && strings.ToUpper(s[2:]) != s[2:] }

func TestParseErrors(t *testing.T) {
	good := "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
	cases := []struct {
		name string
		in   string
		want error
	}{
		{"empty", "", eip55.ErrMalformed},
		{"no prefix", good[2:], eip55.ErrMalformed},
		{"short", good[:41], eip55.ErrMalformed},
		{"long", good + "0", eip55.ErrMalformed},
		{"not hex", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg", eip55.ErrMalformed},
		{"space", " " + good[1:], eip55.ErrMalformed},
		{"one letter's case flipped", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", eip55.ErrChecksum},
		{"first letter's case flipped", "0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", eip55.ErrChecksum},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := eip55.Parse(tc.in)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Parse(%q) = %q, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

// FuzzParse checks that Parse accepts exactly the well-formed addresses,
// that what it returns is in checksum form and parses to itself, and that
// it agrees with the address in any case where it has no checksum.
func FuzzParse(f *testing.F) {
	for _, v := range referenceVectors {
		f.Add(v)
		f.Add(strings.ToLower(v))
	}
	f.Add("0x")
	f.Add("0X52908400098527886E0F7030069857D2E4169EE7")
	f.Add("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := eip55.Parse(s)
		if err != nil {
			if !errors.Is(err, eip55.ErrMalformed) && !errors.Is(err, eip55.ErrChecksum) {
				t.Fatalf("Parse(%q): unexpected error %v", s, err)
			}
			return
		}
		if len(got) != 42 || !strings.EqualFold(got[2:], s[2:]) {
			t.Fatalf("Parse(%q) = %q: not the same address", s, got)
		}
		again, err := eip55.Parse(got)
		if err != nil || again != got {
			t.Fatalf("Parse(Parse(%q)) = %q, %v; want %q", s, again, err, got)
		}
		if low, err := eip55.Parse(strings.ToLower(got)); err != nil || low != got {
			t.Fatalf("Parse(lower(%q)) = %q, %v; want %q", got, low, err, got)
		}
	})
}
