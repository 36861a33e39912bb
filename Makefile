# relayout — see README.md and docs/. `make demo` and `make test` do all set-up on a fresh Debian/Ubuntu machine
# (they run `make deps`); `make build` and `make install` never install packages or call sudo.
GO      ?= go
PREFIX  ?= /usr/local
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
BIN     := bin/relayout
FUZZTIME ?= 3000x

.PHONY: all deps build install demo test lint fuzz fuzz-inputs bench bench-peers bench-scale bench-climate bench-scorpio clean

# HDF5 linked statically where its archives are installed (Debian's libhdf5-dev), by builds and
# tests alike: a command then starts without loading the 37 libraries of the shared libhdf5
# (scripts/hdf5-ldflags.sh says why and how). Expanded when a recipe runs, so after `make deps`,
# from the CGO_LDFLAGS make was given.
CGO_LDFLAGS_GIVEN := $(CGO_LDFLAGS)
export CGO_LDFLAGS = $(shell scripts/hdf5-ldflags.sh '$(CGO_LDFLAGS_GIVEN)')

all: build

deps:
	@scripts/deps.sh

# Checks that cgo finds HDF5 (scripts/check-hdf5.sh says what to do when not: `make deps` on
# Debian, a module/Spack HDF5 or CGO_CFLAGS/CGO_LDFLAGS elsewhere), then builds bin/relayout.
build:
	@scripts/check-hdf5.sh
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) .

# bin/relayout to $(DESTDIR)$(PREFIX)/bin (default /usr/local/bin; PREFIX=$$HOME/.local for a user).
install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/relayout

# The main job on a sample the project generates itself: an openPMD-HDF5 series
# of 2 iterations, 4 variables of 64^3 float64 in 64 chunks written in scattered order.
demo: deps build
	rm -rf demo
	$(BIN) generate demo/sample --shape 64,64,64 --chunk-shape 16,16,16 --steps 0,100
	$(BIN) catalog demo/sample
	$(BIN) run demo/sample -o demo/out --layout chunked --chunks 2x2x2
	$(BIN) verify demo/sample demo/out
	@echo "demo: reorganized files are in demo/out (manifest demo/out/relayout.json)"

# Every package builds and vets with CGO_ENABLED=0 (internal/h5's stub: HDF5
# unavailable); these are pure Go and also pass their tests so (the layering
# test checks their dependencies too). Then the race detector on the
# concurrent packages' pipeline tests (a selection: -race makes them about
# 10x slower).
PUREGO    := ./catalog/ ./planner/ ./reader/bp/ ./reader/scorpio/ ./reader/amrex/ ./reader/netcdf/ ./reader/blockio/ ./internal/fileio/ ./internal/limits/
RACE_RUN  := TestRunCancelNoLeaks|TestRunNoDigest|TestAllocatedChunks|TestRunTiles|TestBlockIndexMatchesScan|TestCheckOverlaps|TestRollForward|TestShardsMatchRun

# The e2e package runs the built binary against real data and peers (Slurm
# with three nodes waits on slurmctld's 30 s timers): past go test's default
# 10 minutes a package on a loaded machine, so its bound is set here; CI's
# own bound (.ci/run) stays the one that matters.
test: deps
	$(GO) vet ./...
	$(MAKE) --no-print-directory lint
	PATH="$(GOBIN_DIR):$$PATH" $(GO) test -count=1 -timeout 40m ./...
	CGO_ENABLED=0 $(GO) build ./...
	CGO_ENABLED=0 $(GO) vet ./...
	CGO_ENABLED=0 $(GO) test -count=1 $(PUREGO) ./internal/h5/
	$(GO) test -count=1 -race -run '$(RACE_RUN)' ./rewriter/ ./job/
	$(GO) test -count=1 -race ./reader/blockio/ ./internal/membudget/
	$(GO) test -count=1 -race -run 'TestBudget|TestCancel|TestSynthetic|TestTap' ./verify/
	$(GO) test -count=1 -race -run 'TestMergeParallelMatchesSerial|TestMergeCacheShapes|TestPlanArrayCounts' ./planner/
	$(MAKE) --no-print-directory fuzz

# The lint gate beyond go vet: staticcheck (default checks; no staticcheck.conf, as none is noise
# here) over every package as built with cgo, and internal/h5's stub as built without; and
# go-arch-lint, the import rules between packages (.go-arch-lint.yml; layering_test.go checks what
# it cannot say and runs it against imports that break the rules). Both installed with `go install`
# from the Go module proxy at the pinned version into `go env GOBIN` (or GOPATH/bin) when absent or
# of another version. `make test` runs it after go vet.
STATICCHECK_VERSION := v0.8.2
ARCHLINT_VERSION    := v1.13.0
GOBIN_DIR   = $(or $(shell $(GO) env GOBIN),$(firstword $(subst :, ,$(shell $(GO) env GOPATH)))/bin)
STATICCHECK = $(GOBIN_DIR)/staticcheck
ARCHLINT    = $(GOBIN_DIR)/go-arch-lint

lint:
	@case "$$($(STATICCHECK) -version 2>/dev/null)" in \
	  *"($(STATICCHECK_VERSION:v%=%))"*) ;; \
	  *) echo "go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)"; \
	     $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ;; \
	esac
	@case "$$($(ARCHLINT) version 2>/dev/null)" in \
	  *"$(ARCHLINT_VERSION:v%=%)"*) ;; \
	  *) echo "go install github.com/fe3dback/go-arch-lint@$(ARCHLINT_VERSION)"; \
	     $(GO) install github.com/fe3dback/go-arch-lint@$(ARCHLINT_VERSION) ;; \
	esac
	$(STATICCHECK) ./...
	CGO_ENABLED=0 $(STATICCHECK) ./internal/h5/
	$(ARCHLINT) check --output-color=false

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

# Side-by-side timings against cp and h5repack (scripts/bench.sh), then against the real peers
# on real ADIOS2 and openPMD output (scripts/bench-peers.sh); each writes its full log to
# bench/history/<date>-<name>.md; bench/RESULTS.md holds the current figures (updated from the logs).
# First the per-block cost of catalog and plan (bench/planbench: ns/block, cpu-s/op).
bench: deps build
	$(GO) test -run '^$$' -bench . -benchtime 3x ./bench/planbench
	scripts/bench.sh
	scripts/bench-peers.sh
	scripts/bench-climate.sh

# Only the second part: cp+sync, adios2_reorganize, openpmd-pipe, h5repack and relayout on
# BP4, BP5 and openPMD inputs written by ADIOS2 and openPMD-api (BENCH_N=384: about 1 GiB each).
bench-peers: deps build
	scripts/bench-peers.sh

# Time per GiB and peak RSS from 256 MiB to 8 GiB inputs; the log goes to bench/history/.
bench-scale: deps build
	scripts/bench-scale.sh

# Climate history files into time series (issue 40): cp+sync, ncclimo --split, ncrcat, nccopy and
# relayout on 12 monthly CDF-2 files written through netCDF-C (1 GiB) and the real MPAS-Ocean set.
bench-climate: deps build
	scripts/bench-climate.sh

# SCORPIO ADIOS output into time series (issue 42): cp+sync, adios2pio-nm and relayout on a 1.1 GB
# file written by scorpio_gen on 16 ranks (100,000 columns in shuffled runs of 4, 72 levels, 12 frames).
bench-scorpio: deps build
	scripts/bench-scorpio.sh

clean:
	rm -rf bin demo
