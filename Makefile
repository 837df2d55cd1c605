# gekc — build, test and benchmark.
#
#   make test    vet + all tests (what CI runs)
#   make bench   the training-step benchmarks of the issue tracker
#   make umls    the quick demo sweep shipped in the repository

GO       ?= go
BENCHTIME ?= 10x

.PHONY: test vet bench umls fuzz

test: vet
	$(GO) test -count=1 ./...

vet:
	$(GO) vet ./...

bench:
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) -benchmem ./graph/ ./train/ ./models/ ./objectives/

umls:
	$(GO) run ./experiments -grid grids/umls.toml

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParseTriples -fuzztime 30s ./kg/
