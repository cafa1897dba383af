//go:build !linux

package wal

import "os"

// rawFsync is false outside Linux: there os.File.Sync is not a plain
// fsync(2) that a raw system call could stand in for. On macOS it is
// fcntl F_FULLFSYNC, which also flushes the drive's write cache where
// fsync does not (package internal/poll), and Windows has no fsync call.
// The commit's fsync is tidwall's Sync there (tailsync.go).
const rawFsync = false

// fsyncHolding is os.File.Sync outside Linux; syncTail does not call it,
// since rawFsync is false.
func fsyncHolding(f *os.File) error { return f.Sync() }
