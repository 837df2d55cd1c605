# gekc — build, test and benchmark.
#
#   make test    set-up check, vet + all tests (what CI runs)
#   make deps    install what is missing besides Go (gcc, OpenBLAS), or say how
#   make bench   the training-step benchmarks of the issue tracker
#   make umls    the quick demo sweep shipped in the repository
#   make mpi     bin/gekc-mpi: the command linked with the site's MPI, for
#                mpirun -np P bin/gekc-mpi -grid G -only N (README, "Past one machine")

GO       ?= go
BENCHTIME ?= 10x

# The test pipeline's status is go test's, not only the formatter's.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c

.PHONY: test deps vet bench umls fuzz mpi

# go test -json feeds scripts/testprogress, which prints a line as each
# package starts and ends and, every 30 s, what is still compiling or
# running: a cold build cache compiles for minutes (README, Set-up). vet
# comes after, when everything is compiled.
test: deps
	@echo "go test ./... (first compiles: minutes on a cold build cache, a line every 30 s)"
	$(GO) test -count=1 -json ./... | $(GO) run ./scripts/testprogress
	$(GO) vet ./...

deps:
	@scripts/deps

vet: deps
	$(GO) vet ./...

bench:
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) -benchmem ./graph/ ./train/ ./models/ ./objectives/

umls:
	$(GO) run ./experiments -grid grids/umls.toml

mpi: deps
	$(GO) build -tags mpi -o bin/gekc-mpi ./experiments

FUZZTIME ?= 30s

# One target at a time (go test -fuzz takes one); a short minimisation
# keeps the fuzzer fuzzing rather than shrinking.
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParseTriples -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./kg/
	$(GO) test -run '^$$' -fuzz FuzzParseSchema -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./kg/
	$(GO) test -run '^$$' -fuzz FuzzWriteOGB -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./kg/
	$(GO) test -run '^$$' -fuzz FuzzParseGrid -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./grid/
	$(GO) test -run '^$$' -fuzz FuzzParseReferenceAndCauses -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./report/
	$(GO) test -run '^$$' -fuzz FuzzReadState -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./train/ckpt/
	$(GO) test -run '^$$' -fuzz FuzzReadNpyEntry -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./train/ckpt/
	$(GO) test -run '^$$' -fuzz FuzzReadCalibrationTSV -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./analysis/
	$(GO) test -run '^$$' -fuzz FuzzReadKTDTSV -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./analysis/
	$(GO) test -run '^$$' -fuzz FuzzReadShape -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./synth/

# The emitted SLURM job array on a real single-node SLURM (root, Debian's
# slurm-wlm and munge; scripts/slurm-local installs them when absent). Jobs
# and daemons stay on core $(SLURM_CORES). See README, "Running on a cluster".
SLURM_CORES ?= 0

.PHONY: slurm-test
slurm-test:
	SLURM_LOCAL_CPUS=$(SLURM_CORES) scripts/slurm-local start
	taskset -c $(SLURM_CORES) scripts/slurm-e2e; rc=$$?; scripts/slurm-local stop; exit $$rc
