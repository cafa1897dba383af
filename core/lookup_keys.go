package core

// The by-name and by-code lookups are keyed by arrays, not strings: a map
// whose keys and values hold no pointer is never scanned by the garbage
// collector, and with 1,000,000 accounts these two maps were about 160 MB
// of the heap it marked each cycle (docs/PERFORMANCE.md, "A heap the
// collector marks quickly").

// nameKey is a name as the names map keys it: lower-cased (names are unique
// ignoring case), then zero bytes, which no valid name holds.
type nameKey [MaxNameLen]byte

// nameKeyOf returns the key of name; false when name is longer than any
// valid name (ValidName) or holds a zero byte, which no account's name can,
// so that no lookup of it can match. A name with zero bytes would otherwise
// have the key of the name before them: a login as "alice\x00" found alice
// under a name the login lockout counts apart from hers.
func nameKeyOf(name string) (k nameKey, ok bool) {
	if len(name) > len(k) {
		return k, false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == 0:
			return nameKey{}, false
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		k[i] = c
	}
	return k, true
}

// codeKey is a referral code as the codes lookup keys it.
type codeKey [ReferralCodeLen]byte

// codeKeyOf returns the key of a referral code; false when it is not
// ReferralCodeLen bytes long, as every code made is (the house has none).
func codeKeyOf(code string) (k codeKey, ok bool) {
	if len(code) != len(k) {
		return k, false
	}
	copy(k[:], code)
	return k, true
}
