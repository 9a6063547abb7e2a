# The two commands of the README: `make run` and `make test`. `make bench` measures.
SWIFT ?= swift
DATA_DIR ?= .eventbus
SWIFTFLAGS ?=
# What `make run` starts: `eventbus up`, whose default pipeline's plugins it finds beside it.
BUS_PRODUCTS = eventbus receipt-reducer read-privacy delivery-privacy
# The examples: packages of their own on the bus (by path), built apart from the root, so
# that the bus builds without their web framework. The first has no tests of its own:
# the root's supervisor tests run its plugins.
EXAMPLES = examples/plugins examples/chat-backend examples/gateway
EXAMPLES_WITH_TESTS = examples/chat-backend examples/gateway
# Parts of the bus in packages of their own, for the same reason, each with tests: the HTTP
# ingress eventbus-http (docs/http.md), which `eventbus up --http` finds by EVENTBUS_HTTP.
EDGES = edge/http
# `make test` builds the examples and the edges in one scratch folder: their shared dependencies
# (the bus's own modules, swift-nio, Hummingbird) compile once, not once per package.
PACKAGES_SCRATCH = $(CURDIR)/.build-packages
# Where the tests find the executables they start (Sources/EventBusTesting/BuildFolder.swift).
TEST_ENV = EVENTBUS_BIN=$(CURDIR)/.build/debug/eventbus \
	EVENTBUS_EXAMPLE_PLUGINS_BIN=$(PACKAGES_SCRATCH)/debug \
	EVENTBUS_EXAMPLE_CHAT_BACKEND_BIN=$(PACKAGES_SCRATCH)/debug \
	EVENTBUS_EXAMPLE_GATEWAY_BIN=$(PACKAGES_SCRATCH)/debug \
	EVENTBUS_HTTP=$(PACKAGES_SCRATCH)/debug/eventbus-http

.PHONY: run test test-swift test-examples test-edges test-python test-formal test-chaos test-mutants chaos build examples edges release bench clean fuzz fuzz-build

run: release
	.build/release/eventbus up --data-dir $(DATA_DIR)

# Only the bus: no example, benchmark or fuzzer.
release:
	@scripts/ensure-deps.sh
	@for product in $(BUS_PRODUCTS); do \
		echo "$(SWIFT) build -c release --product $$product $(SWIFTFLAGS)"; \
		$(SWIFT) build -c release --product $$product $(SWIFTFLAGS) || exit 1; \
	done

build:
	@scripts/ensure-deps.sh
	$(SWIFT) build $(SWIFTFLAGS)

examples:
	@scripts/ensure-deps.sh
	@for package in $(EXAMPLES); do \
		echo "$(SWIFT) build --package-path $$package $(SWIFTFLAGS)"; \
		$(SWIFT) build --package-path $$package $(SWIFTFLAGS) || exit 1; \
	done

# eventbus-http, release, for `eventbus up --http` (EVENTBUS_HTTP=edge/http/.build/release/eventbus-http).
edges:
	@scripts/ensure-deps.sh
	@for package in $(EDGES); do \
		echo "$(SWIFT) build -c release --package-path $$package $(SWIFTFLAGS)"; \
		$(SWIFT) build -c release --package-path $$package $(SWIFTFLAGS) || exit 1; \
	done

test:
	@scripts/check-test-sleeps.sh
	@scripts/ensure-deps.sh --test
	$(SWIFT) build --build-tests $(SWIFTFLAGS)
	@for package in $(EXAMPLES) $(EDGES); do \
		echo "$(SWIFT) build --build-tests --package-path $$package --scratch-path $(PACKAGES_SCRATCH) $(SWIFTFLAGS)"; \
		$(SWIFT) build --build-tests --package-path $$package --scratch-path $(PACKAGES_SCRATCH) $(SWIFTFLAGS) || exit 1; \
	done
	$(MAKE) test-formal test-swift test-examples test-edges test-python test-chaos test-mutants

# The whole output goes to .build/test-swift.log too; on a failure scripts/test-report.sh
# prints the failed tests, those still running and any crash's backtrace last.
test-swift:
	@mkdir -p .build
	@bash -c 'set -o pipefail; $(TEST_ENV) $(SWIFT) test --skip-build 2>&1 | tee .build/test-swift.log' \
		|| { scripts/test-report.sh .build/test-swift.log; exit 1; }

test-examples:
	@for package in $(EXAMPLES_WITH_TESTS); do \
		echo "$(SWIFT) test --skip-build --package-path $$package --scratch-path $(PACKAGES_SCRATCH)"; \
		$(TEST_ENV) $(SWIFT) test --skip-build --package-path $$package --scratch-path $(PACKAGES_SCRATCH) || exit 1; \
	done

test-edges:
	@for package in $(EDGES); do \
		echo "$(SWIFT) test --skip-build --package-path $$package --scratch-path $(PACKAGES_SCRATCH)"; \
		$(TEST_ENV) $(SWIFT) test --skip-build --package-path $$package --scratch-path $(PACKAGES_SCRATCH) || exit 1; \
	done

test-python:
	$(TEST_ENV) python3 -m pytest -q Tests/Python

# The Promela model of commit, dedup and the plugin's resume, checked with spin
# (docs/reliability.md): the real rules pass, each mutant gives a counterexample.
test-formal:
	formal/check.sh

# The fault campaign (docs/reliability.md, "The fault campaign"): rounds of `eventbus up`
# under one injected fault each (kill -9, SIGSTOP, torn tail), checked against an in-process
# model. `make chaos` runs about CHAOS_MINUTES of rounds; ROUNDS=N runs exactly N, SEED=S
# starts from seed S (SEED=S ROUNDS=1 replays a failed round), FAULT=KIND runs only rounds of
# that fault ("torn tail", "failing fsync", "kill -9 eventbus up"…). `make test` runs a short one.
CHAOS_MINUTES ?= 10
CHAOS_EVENTS ?= 12000
CHAOS_ARGS = $(if $(ROUNDS),--rounds $(ROUNDS)) $(if $(SEED),--seed $(SEED)) $(if $(FAULT),--fault "$(FAULT)")

chaos:
	@scripts/ensure-deps.sh
	@for product in eventbus-chaos eventbus-chaos-fsync $(BUS_PRODUCTS); do \
		echo "$(SWIFT) build --product $$product $(SWIFTFLAGS)"; \
		$(SWIFT) build --product $$product $(SWIFTFLAGS) || exit 1; \
	done
	$(TEST_ENV) .build/debug/eventbus-chaos --minutes $(CHAOS_MINUTES) --events $(CHAOS_EVENTS) $(CHAOS_ARGS)

# The short campaign of `make test`: rounds for 90 s (the last one finishes), 6,000 events each.
test-chaos:
	$(TEST_ENV) .build/debug/eventbus-chaos --minutes 1.5 --events 6000 $(CHAOS_ARGS)

# The checker, checked (docs/reliability.md): the bus built again with its deliberate bugs compiled
# in (Sources/EventBusCore/Support/Mutant.swift), in a scratch path of its own so that .build/debug
# stays whole, then rounds against each until the checker reports the rule it breaks.
MUTANT_SCRATCH ?= .build-mutants
MUTANTS = confirm-before-fsync dedup-window-0 reducer-skips-watermark

test-mutants:
	@for product in $(BUS_PRODUCTS); do \
		echo "$(SWIFT) build --scratch-path $(MUTANT_SCRATCH) -Xswiftc -DEVENTBUS_MUTANTS --product $$product"; \
		$(SWIFT) build --scratch-path $(MUTANT_SCRATCH) -Xswiftc -DEVENTBUS_MUTANTS --product $$product $(SWIFTFLAGS) || exit 1; \
	done
	@for mutant in $(MUTANTS); do \
		EVENTBUS_BIN=$(CURDIR)/$(MUTANT_SCRATCH)/debug/eventbus .build/debug/eventbus-chaos mutant $$mutant || exit 1; \
	done

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

# The benchmarks need the whole root (its bench executables) and two examples: the
# identity plugin (pipeline stages) and the gateway with its fan-out benchmark.
bench:
	@scripts/ensure-deps.sh
	$(SWIFT) build -c release $(SWIFTFLAGS)
	$(SWIFT) build -c release --package-path examples/plugins $(SWIFTFLAGS)
	$(SWIFT) build -c release --package-path examples/gateway $(SWIFTFLAGS)
	$(SWIFT) build -c release --package-path edge/http $(SWIFTFLAGS)
	@Benchmarks/run.sh

clean:
	rm -rf .build $(EXAMPLES:%=%/.build) $(EDGES:%=%/.build) $(PACKAGES_SCRATCH) $(MUTANT_SCRATCH)
