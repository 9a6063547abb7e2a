# The two commands of the README: `make run` and `make test`. `make bench` measures.
SWIFT ?= swift
DATA_DIR ?= .eventbus
SWIFTFLAGS ?=

.PHONY: run test test-swift test-python build release bench clean

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

bench: release
	@Benchmarks/run.sh

clean:
	rm -rf .build
