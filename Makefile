# marketd build and test entry points. `make test` is what CI runs.
GO ?= go
PKGS := ./...

.PHONY: build run test vet unit bench bench-core fuzz

# The server binary, left at bin/marketd.
build:
	$(GO) build -o bin/marketd ./cmd/marketd

# Build and start the server with its embedded defaults: data under ./data,
# listening on :8080; without -admin-password it creates the account admin
# with a generated password and prints it once. ARGS passes flags.
run: build
	./bin/marketd $(ARGS)

# vet, then the whole suite with the race detector, the long property and
# crash runs (build tag long) included.
test: vet unit

vet:
	$(GO) vet $(PKGS)

unit:
	$(GO) test -race -count=1 -tags long -timeout 15m $(PKGS)

# Benchmarks of the core, the log and the snapshots (issue 3 figures).
bench: bench-core

bench-core:
	$(GO) test -run '^$$' -bench . -benchmem -count=6 ./core/... ./wal/... ./snapshot/...

# A short run of every fuzz target.
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME) ./core/money/
	$(GO) test -run '^$$' -fuzz FuzzDecodeRecord -fuzztime $(FUZZTIME) ./wal/
	$(GO) test -run '^$$' -fuzz FuzzDecodeFrame -fuzztime $(FUZZTIME) ./wal/
	$(GO) test -run '^$$' -fuzz FuzzDecodeSnapshot -fuzztime $(FUZZTIME) ./snapshot/
