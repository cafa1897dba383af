package transport

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"

	"marketd/core"
)

// Secrets are drawn from crypto/rand, whose Read never fails (Go 1.24 and
// later crash the program instead of returning an error).

// newKeyLiteral draws an API key: svc_live_ and 32 lowercase hex digits
// (128 random bits), with the SHA-256 that is stored and the prefix shown.
func newKeyLiteral() (key string, hash [32]byte, prefix string) {
	var b [keyHexLen / 2]byte
	_, _ = rand.Read(b[:])
	key = keyLiteralPrefix + hex.EncodeToString(b[:])
	return key, sha256.Sum256([]byte(key)), key[:core.KeyPrefixLen]
}

// newSessionToken draws a session token of 256 random bits, as 64 hex
// digits, with the SHA-256 that is stored.
func newSessionToken() (token string, hash [32]byte) {
	var b [32]byte
	_, _ = rand.Read(b[:])
	token = hex.EncodeToString(b[:])
	return token, sha256.Sum256([]byte(token))
}
