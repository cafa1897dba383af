// Package vfs is the file system through which marketd's own file code
// (the log's repair, replay and directory fsyncs, the snapshots, the
// offline checker and the backup) reads and writes, so that tests can fail
// or crash any of its operations, in the manner of pebble's vfs package.
//
// It provides three implementations of FS:
//
//   - Default, backed by package os: production.
//   - ErrorFS wraps another FS and fails the operations an Injector
//     chooses (the Nth operation matching a predicate, once or from then
//     on; injectors combine), as pebble's errorfs does.
//   - CrashFS holds files in memory and remembers what was synced: Crash
//     returns the file system a machine would find after losing power,
//     with only the synced file contents and the directory entries made
//     durable by a directory fsync, as pebble's MemFS crash clone does.
//
// Tidwall/wal opens and writes its segment files itself through package
// os, out of this interface's reach: the tests of those calls kill or fail
// the real process at its Nth system call with strace instead (see
// docs/RELIABILITY.md).
package vfs
