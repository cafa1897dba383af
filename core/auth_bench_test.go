package core_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"marketd/core"
	"marketd/internal/cputime"
	"marketd/internal/memjournal"
)

// BenchmarkAuthenticateKeyParallel: AuthenticateKey from every P at once,
// each goroutine with a key of its own, as the closed loop's connections
// are (docs/PERFORMANCE.md, "The closed loop's server CPU, piece by
// piece"): what the auth table's read lock costs when the cores contend
// for it. Run it at -cpu 2 (at -cpu 1 nothing contends). The engine reads
// the real clock, as marketd's does: the harness's manual clock takes a
// mutex of its own.
func BenchmarkAuthenticateKeyParallel(b *testing.B) {
	ctx := context.Background()
	e := core.NewEngine(core.NewState(), memjournal.New(),
		core.Config{CloseInterval: -1, UsageFlushInterval: -1, OracleInterval: -1})
	b.Cleanup(e.Close)
	const keys = 64 // the closed loop's connections; their hashes' first bytes 0-63
	hashes := make([][32]byte, keys)
	for i := range keys {
		a, err := e.CreateAccount(ctx, core.NewAccount{Name: fmt.Sprint("bot", i), Role: core.RoleSpeculator, PasswordHash: []byte("hash")})
		if err != nil {
			b.Fatal(err)
		}
		k, err := e.CreateKey(ctx, core.NewKey{Account: a.ID, Name: "k", Hash: [32]byte{byte(i), 0xA5},
			Prefix: "svc_live_01234567", Scopes: core.ScopeTrade})
		if err != nil {
			b.Fatal(err)
		}
		hashes[i] = k.Hash
	}
	var next atomic.Int64
	cpu0, hasCPU := cputime.Process()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		hash := hashes[int(next.Add(1)-1)%keys]
		for pb.Next() {
			if _, err := e.AuthenticateKey(hash); err != nil {
				b.Error(err)
				return
			}
		}
	})
	// CPU time, not only the wall's: on a shared machine the two goroutines
	// run at once only part of the time, and a line moved between cores
	// shows as cycles stalled.
	if cpu1, ok := cputime.Process(); hasCPU && ok {
		b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
