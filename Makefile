# marketd build and test entry points. `make test` is what CI runs.
GO ?= go
PKGS := ./...

.PHONY: test vet unit bench bench-core fuzz

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
