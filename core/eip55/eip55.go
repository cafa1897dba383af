// Package eip55 parses Ethereum account addresses and writes them in the
// mixed-case checksum form of EIP-55, so that a wallet address is stored
// and compared in one spelling whatever case a client sent.
//
// An address is "0x" and 40 hexadecimal digits. A mixed-case address
// carries a checksum in its letters' case, which Parse verifies: a typo
// in such an address is caught instead of sending money nowhere. An
// all-lower-case or all-upper-case address carries no checksum and is
// accepted as it is (EIP-55: "backwards compatible").
package eip55

import (
	"errors"
	"fmt"

	"golang.org/x/crypto/sha3"
)

// Errors of Parse.
var (
	// ErrMalformed reports a string that is not "0x" and 40 hexadecimal
	// digits.
	ErrMalformed = errors.New("must be 0x followed by 40 hexadecimal digits")
	// ErrChecksum reports a mixed-case address whose case does not match
	// its EIP-55 checksum.
	ErrChecksum = errors.New("invalid EIP-55 checksum")
)

// hexDigits is the length of an address without its "0x".
const hexDigits = 40

// Parse checks s and returns the address in its EIP-55 checksum form.
func Parse(s string) (string, error) {
	if len(s) != 2+hexDigits || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') {
		return "", ErrMalformed
	}
	hex := s[2:]
	var lower, upper bool
	for i := 0; i < len(hex); i++ {
		switch c := hex[i]; {
		case c >= '0' && c <= '9':
		case c >= 'a' && c <= 'f':
			lower = true
		case c >= 'A' && c <= 'F':
			upper = true
		default:
			return "", ErrMalformed
		}
	}
	sum := Checksum(hex)
	if lower && upper && sum[2:] != hex {
		return "", ErrChecksum
	}
	return sum, nil
}

// Checksum returns "0x" and the 40 hexadecimal digits of hex in EIP-55
// case: a letter is upper-case where the matching nibble of the
// Keccak-256 of the lower-case digits is 8 or more. hex must be 40
// hexadecimal digits, in any case.
func Checksum(hex string) string {
	if len(hex) != hexDigits {
		panic(fmt.Sprintf("BUG: eip55: checksum of %d digits", len(hex)))
	}
	var low [hexDigits]byte
	for i := 0; i < hexDigits; i++ {
		c := hex[i]
		if c >= 'A' && c <= 'F' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	h := sha3.NewLegacyKeccak256()
	h.Write(low[:]) // a hash.Hash never fails to write
	digest := h.Sum(nil)
	out := make([]byte, 2+hexDigits)
	out[0], out[1] = '0', 'x'
	for i, c := range low {
		nibble := digest[i/2] >> 4
		if i%2 == 1 {
			nibble = digest[i/2] & 0x0f
		}
		if c >= 'a' && nibble >= 8 {
			c -= 'a' - 'A'
		}
		out[2+i] = c
	}
	return string(out)
}
