# marketd build and test entry points. `make test` is what CI runs.
GO ?= go
PKGS := ./...

.PHONY: build load-build run test vet unit bench bench-core bench-floor bench-least bench-http fuzz load load-snapshot load-pause drill bench-metrics scale fsync-floor

# The server binary, left at bin/marketd.
build:
	$(GO) build -o bin/marketd ./cmd/marketd

# Build and start the server with its embedded defaults: data under ./data,
# listening on :8080; without -admin-password it creates the account admin
# with a generated password and prints it once. ARGS passes flags.
run: build
	./bin/marketd $(ARGS)

# The server and the load generator, left at bin/marketd and
# bin/marketd-load, for the load targets below.
load-build: build
	$(GO) build -o bin/marketd-load ./cmd/marketd-load

# The load generator against a marketd it starts itself (a loopback port,
# a temporary data directory on disk, fsync on): 64 connections, 8
# markets, 20 s closed loop. LOAD_ARGS adds or overrides flags, e.g.
# LOAD_ARGS='-compare -plot docs/plots' or LOAD_ARGS='-rate 5000 -conns 128'.
LOAD_ARGS ?=
load: load-build
	./bin/marketd-load -spawn bin/marketd $(LOAD_ARGS)

# The open loop while snapshots of 1,000,000 accounts are taken
# (docs/PERFORMANCE.md, "The snapshot while trading"): the spawned server's
# data directory is filled with the accounts and their snapshot first
# (about 15 s and 2 GB of memory), then 128 connections send RATE trades a
# second for 60 s while the server takes a snapshot every 15 s. RATE is
# half of marketd's closed-loop 2xx/s (docs/PERFORMANCE.md says how to
# find it); LOAD_ARGS adds flags, e.g. LOAD_ARGS='-trace /tmp/snap'.
RATE ?= 15000
load-snapshot: load-build
	./bin/marketd-load -spawn bin/marketd -accounts 1000000 -snapshot-every 15s -conns 128 -rate $(RATE) \
		-duration 60s -warmup 2s -mix buy=1,sell=1 -progress off $(LOAD_ARGS)

# The open loop with the same stall for marketd and each handler it is
# compared with (docs/PERFORMANCE.md, "The drain after a stall"): each
# target's process is stopped (SIGSTOP) for 60 ms every 10 s of its 60 s
# run, and the report gives the latency of the seconds with a pause
# against the others'. RATE as for load-snapshot; LOAD_ARGS adds flags.
load-pause: load-build
	./bin/marketd-load -spawn bin/marketd -compare -rounds 1 -conns 128 -rate $(RATE) -duration 60s -warmup 2s \
		-mix buy=1,sell=1 -pause-every 10s -pause-for 60ms -progress off $(LOAD_ARGS)

# The disk's own part of the open loop's tail (docs/PERFORMANCE.md, "The
# open loop's tail", section 9): one goroutine writes and fsyncs the
# records due by an open-loop schedule at FLOOR_RATE a second for 60 s,
# appending to one file and then in the log's 1 MiB segments, and prints
# each record's latency and every fsync's. Run it alone on the machine.
FLOOR_RATE ?= 21666
fsync-floor:
	FSYNC_FLOOR_RATE=$(FLOOR_RATE) $(GO) test -tags scale -run TestScaleFsyncFloor -v -count=1 -timeout 10m ./bench/

# The kill -9 drill: marketd as a child on a temporary data directory,
# killed with SIGKILL at random moments under load, checked offline and
# through the API after each restart (bench/drill). DRILL_ARGS adds or
# overrides flags; `make test` runs a 3-cycle drill (TestDrill).
DRILL_ARGS ?= -cycles 100
drill: build
	$(GO) build -o bin/marketd-drill ./cmd/marketd-drill
	./bin/marketd-drill -marketd bin/marketd $(DRILL_ARGS)

# vet, then the whole suite with the race detector, the long property and
# crash runs (build tag long) included.
test: vet unit

vet:
	$(GO) vet $(PKGS)

unit:
	$(GO) test -race -count=1 -tags long -timeout 15m $(PKGS)

# The edit-compile-test loop: vet, the gofmt check and the tests without the
# race detector or the long tag (README gives its time).
.PHONY: check fmt-check lint
check: vet fmt-check
	$(GO) test -count=1 -timeout 10m $(PKGS)

# Fails listing the files gofmt would change.
fmt-check:
	@files=$$(gofmt -l .); if [ -n "$$files" ]; then echo "gofmt would change:"; echo "$$files"; exit 1; fi

# staticcheck at a fixed version, run through the module proxy rather than
# added to go.mod. Its findings are fixed, never silenced.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	$(STATICCHECK) $(PKGS)

# Benchmarks of the core, the log and the snapshots (docs/PERFORMANCE.md,
# "Against the targets"), the bounds of the trade pipeline's shape, and the
# HTTP path (docs/PERFORMANCE.md, "HTTP path").
bench: bench-core bench-floor bench-least bench-http

bench-core:
	$(GO) test -run '^$$' -bench . -benchmem -count=6 ./core/... ./wal/... ./snapshot/...

# A market of 1,000,000 holders closed and settled in bounded steps, and an
# account of 1,000,000 transfers through a snapshot, on the real log with
# fsync on (docs/PERFORMANCE.md, "Settlement and snapshots at scale").
# Minutes and a few GiB of memory; SCALE_HOLDERS and SCALE_TRANSFERS make
# them smaller.
scale:
	$(GO) test -tags scale -count=1 -run 'TestScale' -v -timeout 60m ./bench/

# The shape of core's trade path with no trading in it (callers, actors,
# the log): what core's trade benchmarks cannot exceed here.
bench-floor:
	$(GO) test -run '^$$' -bench BenchmarkPipelineFloor -benchmem -benchtime 2s -count=6 ./bench/

# The floor's shape with the least work a trade must do, one part per row,
# beside the floor's two rows in the same run (docs/PERFORMANCE.md, "The
# least a trade must cost").
bench-least:
	$(GO) test -run '^$$' -bench 'PipelineFloor/^fsync-o[nf]+$$|PipelineLeast' -benchmem -benchtime 2s -count=6 ./bench/

# The HTTP path: a no-op fasthttp handler; two bounds (a handler that only
# waits for a group-committed fsync of a plain file, and one that only
# appends a record to marketd's log); then the trade endpoint (fsync on,
# 8 markets and 1; fsync off), each over 64 loopback connections, in one
# process run so that ratio-vs-noop compares figures measured together.
# 100000 requests take about 1.5 s for noop and 4-7 s per fsync-on run
# here; about 3 minutes in all.
bench-http:
	$(GO) test -run '^$$' -bench BenchmarkHTTP -benchmem -benchtime 100000x -count=6 -timeout 30m ./bench/

# A short run of every fuzz target.
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME) ./core/money/
	$(GO) test -run '^$$' -fuzz FuzzDecodeRecord -fuzztime $(FUZZTIME) ./wal/record/
	$(GO) test -run '^$$' -fuzz FuzzDecodeFrame -fuzztime $(FUZZTIME) ./wal/record/
	$(GO) test -run '^$$' -fuzz FuzzDecodeSnapshot -fuzztime $(FUZZTIME) ./snapshot/
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./transport/strictjson/

# The metrics' cost on the trade path: two durable trade servers, metrics on
# and off, 30 alternating pairs of 10000 requests each over 64 connections
# (short runs, so that a change in the machine's load hits both of a pair);
# the summary (median difference with its range, CPU microseconds per trade
# of each) is the last lines. About 2 minutes here.
bench-metrics:
	$(GO) test -run '^$$' -bench BenchmarkMetricsOverhead -benchtime 10000x -count 1 -v -timeout 30m ./bench/
