package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"marketd/transport"
)

// deviceKeyFile is the name, in the data directory, of the key that signs
// device cookies (docs/API.md, "Failed logins and password hashing"): kept
// there so that the cookies of owners' browsers outlive a restart.
const deviceKeyFile = "device.key"

// loadDeviceKey returns the device-cookie key of dir, creating it on the
// first start: random bytes written to a temporary file, fsynced, renamed
// into place and the directory fsynced, so that a crash leaves either no
// key or the whole key. The caller holds the data directory's lock.
func loadDeviceKey(dir string) ([]byte, error) {
	path := filepath.Join(dir, deviceKeyFile)
	key, err := os.ReadFile(path)
	switch {
	case err == nil:
		if len(key) != transport.DeviceKeyBytes {
			return nil, fmt.Errorf("device key %s: %d bytes, want %d", path, len(key), transport.DeviceKeyBytes)
		}
		return key, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("read device key: %w", err)
	}
	key = make([]byte, transport.DeviceKeyBytes)
	_, _ = rand.Read(key) // crypto/rand.Read never fails (Go 1.24)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create device key: %w", err)
	}
	_, werr := f.Write(key)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return nil, fmt.Errorf("write device key: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("install device key: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("open data directory to sync the device key: %w", err)
	}
	serr = d.Sync()
	if err := errors.Join(serr, d.Close()); err != nil {
		return nil, fmt.Errorf("sync data directory after the device key: %w", err)
	}
	return key, nil
}
