package strictjson

import "bytes"

// unpairedSurrogate returns the index in s of the first \u escape of a
// UTF-16 surrogate that is not a high surrogate directly followed by an
// escaped low one, or -1. s is JSON text in which every backslash begins an
// escape: a string literal the decoder has accepted, perhaps with
// separators around it.
//
// RFC 8259 section 8.2 leaves such strings' meaning unpredictable, and
// encoding/json turns each into U+FFFD: the handler would act on text the
// client never sent.
func unpairedSurrogate(s []byte) int {
	for i := 0; i < len(s); {
		j := bytes.IndexByte(s[i:], '\\')
		if j < 0 {
			return -1
		}
		i += j
		if i+1 >= len(s) {
			return -1
		}
		if s[i+1] != 'u' {
			i += 2 // a one-character escape, \\ included
			continue
		}
		r := hex4(s, i+2)
		switch {
		case r >= 0xD800 && r < 0xDC00:
			if lo := hex4(s, i+8); i+7 < len(s) && s[i+6] == '\\' && s[i+7] == 'u' && lo >= 0xDC00 && lo < 0xE000 {
				i += 12
				continue
			}
			return i
		case r >= 0xDC00 && r < 0xE000:
			return i
		}
		i += 6
	}
	return -1
}

// hex4 returns the value of the four hex digits at s[i:], or -1.
func hex4(s []byte, i int) int {
	if i < 0 || i+4 > len(s) {
		return -1
	}
	v := 0
	for _, c := range s[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | int(c-'A'+10)
		default:
			return -1
		}
	}
	return v
}
