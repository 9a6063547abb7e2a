# The two commands of the README: `make run` and `make test`. `make bench` measures.
SWIFT ?= swift
DATA_DIR ?= .eventbus
SWIFTFLAGS ?=

.PHONY: run test test-swift test-python build release bench clean fuzz fuzz-build

run: release
	.build/release/eventbus up --data-dir $(DATA_DIR)

release:
	@scripts/ensure-deps.sh
	$(SWIFT) build -c release $(SWIFTFLAGS)

build:
	@scripts/ensure-deps.sh
	$(SWIFT) build $(SWIFTFLAGS)

test:
	@scripts/ensure-deps.sh --test
	$(SWIFT) build --build-tests $(SWIFTFLAGS)
	$(MAKE) test-swift test-python

test-swift:
	$(SWIFT) test --skip-build

test-python:
	EVENTBUS_BIN=$(CURDIR)/.build/debug/eventbus python3 -m pytest -q Tests/Python

# libFuzzer over the parser, the JSON scanner and the event validator (docs/fuzzing.md).
# Its own scratch path: the sanitizer build does not disturb .build/debug.
FUZZ_SECONDS ?= 300
FUZZ_SCRATCH ?= .build-fuzz
FUZZ_ARGS ?=
FUZZ_FLAGS = -c debug --scratch-path $(FUZZ_SCRATCH) -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld -Xcc -DEVENTBUS_LIBFUZZER

fuzz-build:
	@scripts/ensure-deps.sh
	$(SWIFT) build $(FUZZ_FLAGS) --product eventbus-fuzz

fuzz: fuzz-build
	mkdir -p $(FUZZ_SCRATCH)/corpus $(FUZZ_SCRATCH)/artifacts
	$(FUZZ_SCRATCH)/debug/eventbus-fuzz -max_total_time=$(FUZZ_SECONDS) -max_len=8192 \
		-artifact_prefix=$(FUZZ_SCRATCH)/artifacts/ $(FUZZ_ARGS) $(FUZZ_SCRATCH)/corpus Tests/Fuzz/corpus

bench: release
	@Benchmarks/run.sh

clean:
	rm -rf .build
