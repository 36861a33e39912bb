# relayout — see README.md. `make demo` and `make test` do all set-up on a fresh Debian/Ubuntu machine.
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
BIN     := bin/relayout
FUZZTIME ?= 3000x

.PHONY: all deps build demo test fuzz fuzz-inputs bench bench-scale clean

all: build

deps:
	@scripts/deps.sh

build: deps
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) .

# The main job on a sample the project generates itself: an openPMD-HDF5 series
# of 2 iterations, 4 variables of 64^3 float64 in 64 chunks written in scattered order.
demo: build
	rm -rf demo
	$(BIN) generate demo/sample --shape 64,64,64 --chunk-shape 16,16,16 --steps 0,100
	$(BIN) catalog demo/sample
	$(BIN) run demo/sample -o demo/out --layout chunked --chunks 2x2x2
	$(BIN) verify demo/sample demo/out
	@echo "demo: reorganized files are in demo/out (manifest demo/out/relayout.json)"

# Packages that must build without cgo (the layering test checks their
# dependencies too), and the race detector on the concurrent packages'
# pipeline tests (a selection: -race makes them about 10x slower).
PUREGO    := ./catalog/ ./planner/ ./reader/bp/ ./reader/amrex/ ./reader/blockio/ ./internal/fileio/
RACE_RUN  := TestRunCancelNoLeaks|TestRunNoDigest|TestAllocatedChunks|TestRunTiles|TestBlockIndexMatchesScan|TestCheckOverlaps|TestRollForward|TestShardsMatchRun

test: deps
	$(GO) vet ./...
	$(GO) test -count=1 ./...
	CGO_ENABLED=0 $(GO) build $(PUREGO)
	CGO_ENABLED=0 $(GO) test -count=1 $(PUREGO)
	$(GO) test -count=1 -race -run '$(RACE_RUN)' ./rewriter/
	$(GO) test -count=1 -race ./reader/blockio/
	$(MAKE) --no-print-directory fuzz

# Every fuzz target runs for a fixed count (FUZZTIME) on top of its seed corpus.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$f"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# Mutation fuzzing of whole inputs (e2e/mutate_test.go): FUZZ_INPUTS damaged copies of the real
# and generated datasets through relayout run, outcomes classified (`make test` runs a fixed 48).
FUZZ_INPUTS ?= 2000
FUZZ_SEED ?= 2
fuzz-inputs: deps
	RELAYOUT_FUZZ_INPUTS=$(FUZZ_INPUTS) RELAYOUT_FUZZ_SEED=$(FUZZ_SEED) $(GO) test -count=1 -timeout 0 -run '^TestMutationFuzz$$' -v ./e2e 2>&1 | grep -v '^=== '

# Side-by-side timings against cp and h5repack; record results in bench/RESULTS.md.
bench: build
	scripts/bench.sh

# Time per GiB and peak RSS from 256 MiB to 4 GiB inputs; recorded in bench/RESULTS.md.
bench-scale: build
	scripts/bench-scale.sh

clean:
	rm -rf bin demo
