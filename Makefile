# Standups — `make run` starts the server, `make test` runs every test.
# Both install the Debian packages they need first when any is missing (as root, or
# through sudo). The Dockerfile installs the same packages.

SWIFT ?= swift
# debug builds in ~3 minutes from scratch, release in ~9; `make run CONFIG=release`.
CONFIG ?= debug
HOST ?= 127.0.0.1
PORT ?= 8080

BUILD_PACKAGES = libwebsockets-dev libwebsockets-evlib-uv libssl-dev libcap-dev libuv1-dev libsqlite3-dev pkg-config
# The tests also drive curl (examples/post-note.sh), openssl (a self-signed certificate)
# and Debian's Chromium with its driver (the browser tests).
TEST_PACKAGES = curl openssl chromium chromium-driver fonts-liberation $(CLUSTER_PACKAGES)
# A cluster: PostgreSQL (storage, room locks, notices) and HAProxy (routing); iproute2 for the
# network namespaces of the partition test.
CLUSTER_PACKAGES = postgresql haproxy iproute2
# The benchmark runs libwebsockets' own C server (lws-mirror) beside ours, and the Python
# client (Tests/Bench/*.py, from .venv) as an independent check; it rewrites the top of
# docs/BENCHMARKS.md and keeps what is below its "measured by hand" line.
BENCH_PACKAGES = libwebsockets-test-server
PYTHON ?= python3
VENV = .venv
SUDO = $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps build run cluster test test-browser test-services lint fuzz bench clean

all: build

# Installs only what is missing, so a prepared machine pays nothing.
PACKAGES = $(BUILD_PACKAGES)
# NB: target-specific, so `make test` installs these through its `deps` prerequisite.
test: PACKAGES = $(BUILD_PACKAGES) $(TEST_PACKAGES)
bench: PACKAGES = $(BUILD_PACKAGES) $(BENCH_PACKAGES) $(CLUSTER_PACKAGES)
cluster: PACKAGES = $(BUILD_PACKAGES) $(CLUSTER_PACKAGES)

deps:
	@missing=""; \
	for package in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q "install ok installed" \
	    || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

build: deps
	$(SWIFT) build -c $(CONFIG) --product standups-server

run: build
	$(SWIFT) run -c $(CONFIG) --skip-build standups-server \
	  --host $(HOST) --port $(PORT) --data-dir ./data --public-dir ./public

# A throwaway cluster on loopback: PostgreSQL, three nodes and HAProxy (deploy/haproxy.cfg);
# prints the URL and the invite link, and stops it all on Ctrl-C. `make cluster OPEN=1` lets
# anyone in (a demo). As root, PostgreSQL runs as its own user (postgres).
cluster: deps $(VENV)/bin/kosoku
	$(SWIFT) build --product standups-server
	$(VENV)/bin/python Tests/Cluster/cluster.py 3 $(if $(OPEN),--open)

# `swift format` (in the toolchain) with the committed .swift-format: 2 spaces, 100 columns,
# no force unwraps or try! outside Tests/ and the bench (their own .swift-format allows them).
# `swift format --in-place --recursive Sources Tests examples Package.swift` fixes layout.
SWIFT_SOURCES = Sources Tests examples Package.swift Fuzz/Package.swift Fuzz/Sources/json-fuzz Fuzz/Sources/patch-fuzz Fuzz/Sources/FuzzDriver Fuzz/Targets
# And no source file over 400 lines (#9: files a newcomer can hold).
lint:
	$(SWIFT) format lint --strict --recursive $(SWIFT_SOURCES)
	@long=$$(find Sources public/js -name '*.swift' -o -name '*.mjs' -o -name '*.c' -o -name '*.h' \
	  | xargs wc -l | awk '$$2 != "total" && $$1 > 400 { print "  " $$2 " (" $$1 " lines)" }'); \
	if [ -n "$$long" ]; then echo "Source files over 400 lines:"; echo "$$long"; exit 1; fi

# Once built, the tests run in two lanes side by side (scripts/side-by-side), as most of their
# time is waiting (pages, timers, restarts), not CPU:
# - test-browser: the browser tests, the longest;
# - test-services: the Swift tests, the web app's own (node), the contract, integration and
#   cluster tests, the fuzzers' fixed runs, and then the browser tests the first lane has not
#   begun yet: the lanes share them (STANDUPS_BROWSER_TURNS, Tests/Browser/conftest.py), the first
#   from the top, the second from the end, so that the two end together.
# (Two targets, so that `make -n test` runs neither.) The partition test runs after both lanes,
# alone: its network namespaces and links change this machine's addresses, and Chromium fails
# what it has in flight then (net::ERR_NETWORK_CHANGED) and drops its WebSockets.
PARTITION_TEST = Tests/Cluster/test_partition.py
# scripts/in-scratch: what the tests write to TMPDIR (servers' data, PostgreSQL, Chromium's
# profiles) goes to a folder of the run's own, removed after it unless it failed.
# Each step says when it began (`step`), so that a run's log shows where its time went.
step = @echo "== $$(date +%T) $(1)"
test: deps lint $(VENV)/bin/kosoku
	$(call step,building)
	$(SWIFT) build --build-tests
	$(call step,both lanes)
	@command -v node >/dev/null || { $(SUDO) apt-get install -y -qq nodejs; }
	rm -rf build/browser-turns && mkdir -p build/browser-turns
	STANDUPS_BROWSER_TURNS=build/browser-turns scripts/in-scratch scripts/side-by-side \
	  "$(MAKE) --no-print-directory test-browser" "$(MAKE) --no-print-directory test-services"
	$(call step,the partition test)
	scripts/in-scratch $(VENV)/bin/python -m pytest -q -p no:cacheprovider $(PARTITION_TEST)

# Each run keeps no cache.
test-browser:
	$(call step,browser tests$(if $(STANDUPS_BROWSER_FROM_THE_END), from the end))
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider --durations=8 Tests/Browser
	$(call step,browser tests done)

# NB: --no-parallel: the store tests take over the process-wide main serial executor. The Swift
# tests run first: one of them captures a real session for the web app's tests, and the contract
# tests read the frames they wrote. The fuzzing's builds take one core (FUZZ_JOBS).
test-services:
	mkdir -p build
	$(call step,Swift tests)
	STANDUPS_REQUIRE_AUTOBAHN=1 STANDUPS_REQUIRE_POSTGRES=1 STANDUPS_FRAMES=build/frames.jsonl \
	  scripts/with-postgres $(SWIFT) test --skip-build --no-parallel
	$(call step,web app's own tests)
	STANDUPS_REQUIRE_CAPTURE=1 node --test Tests/Web/
	$(call step,contract + integration + cluster tests)
	STANDUPS_FRAMES=build/frames.jsonl STANDUPS_REQUIRE_FRAMES=1 \
	  $(VENV)/bin/python -m pytest -q -p no:cacheprovider --durations=8 Tests/Contract Tests/Integration Tests/Cluster \
	  $(if $(STANDUPS_BROWSER_TURNS),--ignore=$(PARTITION_TEST))
	$(call step,fuzzers)
	$(MAKE) --no-print-directory fuzz FUZZ_JOBS=1 FUZZ_LIMIT="-seed=1 -runs=150000" \
	  FUZZ_WIRE_LIMIT="-seed=1 -runs=8000" FUZZ_HTTP_LIMIT="-seed=1 -max_total_time=20"
	$(if $(STANDUPS_BROWSER_TURNS),STANDUPS_BROWSER_FROM_THE_END=1 $(MAKE) --no-print-directory test-browser)

# libFuzzer (in the toolchain), with AddressSanitizer, over four targets:
# - json, patch: the JSON parser and JSON Patch. Fuzz/ is a package of its own, built into
#   .build-fuzz, so that the sanitizers reach only that code.
# - wire: frames through parsing, action decoding and the room's and lobby's reducers;
#   http: bytes on a connection to the transport's HTTP server. These are targets of the main
#   package that exist only with STANDUPS_FUZZ=1, with the project's own modules instrumented
#   (not the packages they use, nor macros). They are built in .build, beside the others: only
#   the project's own modules compile anew (a minute, not the seven a scratch path of their own
#   took on one core), and the next plain build compiles them back (half a minute).
# Each target runs on a fresh copy of its seed corpus (Fuzz/corpus/…) under build/fuzz/; a failure
# (a crash, a hang past -timeout, a leak) keeps the input that caused it there (crash-…,
# timeout-…, leak-…) and fails. `make test` runs a fixed seed and number of runs (10 to 25 s
# each; the http target, whose server is threads, a fixed time), so that it is the same run
# every time; `make fuzz` explores anew, FUZZ_SECONDS each (add what it finds to Fuzz/corpus
# with its fix).
FUZZ_SECONDS ?= 60
FUZZ_LIMIT ?= -max_total_time=$(FUZZ_SECONDS)
FUZZ_WIRE_LIMIT ?= -max_total_time=$(FUZZ_SECONDS)
FUZZ_HTTP_LIMIT ?= -max_total_time=$(FUZZ_SECONDS)
# How many compile jobs the fuzzers' builds run at once (empty: one per core).
FUZZ_JOBS ?=
FUZZ_BUILD = $(SWIFT) build $(if $(FUZZ_JOBS),-j $(FUZZ_JOBS))
# NB: Swift's crash reporter can hang under libFuzzer, which reports crashes itself. The
# suppressions are for Swift's weak-reference side tables (see the file).
FUZZ_ENV = SWIFT_BACKTRACE=enable=no LSAN_OPTIONS=suppressions=$(CURDIR)/Fuzz/lsan.supp
# $(call run-fuzz,target,binary,limit,options)
define run-fuzz
	@rm -rf build/fuzz/$(1) && mkdir -p build/fuzz/$(1) && cp Fuzz/corpus/$(1)/* build/fuzz/$(1)/
	@echo "== $$(date +%T) fuzzing $(1) ($(3))"
	@$(FUZZ_ENV) $(2) build/fuzz/$(1) $(3) $(4) -rss_limit_mb=2048 -artifact_prefix=build/fuzz/ \
	  > build/fuzz/$(1).log 2>&1; \
	status=$$?; grep -E "^Done|Precondition|Fatal|ERROR" build/fuzz/$(1).log; \
	[ $$status = 0 ] || { echo "$(1)-fuzz failed: see build/fuzz/$(1).log"; exit 1; }
endef
fuzz:
	mkdir -p build/fuzz
	$(call step,building the fuzzers)
	cd Fuzz && $(FUZZ_BUILD) --scratch-path ../.build-fuzz \
	  -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library > ../build/fuzz/build.log 2>&1 \
	  || { grep -v "Cannot export local symbol" ../build/fuzz/build.log; exit 1; }
	STANDUPS_FUZZ=1 $(FUZZ_BUILD) --product wire-fuzz \
	  > build/fuzz/build-main.log 2>&1 \
	  && STANDUPS_FUZZ=1 $(FUZZ_BUILD) --product http-fuzz \
	  >> build/fuzz/build-main.log 2>&1 \
	  || { grep -v "Cannot export local symbol" build/fuzz/build-main.log; exit 1; }
	$(call run-fuzz,json,.build-fuzz/debug/json-fuzz,$(FUZZ_LIMIT),-dict=Fuzz/json.dict -max_len=4096 -timeout=5)
	$(call run-fuzz,patch,.build-fuzz/debug/patch-fuzz,$(FUZZ_LIMIT),-dict=Fuzz/json.dict -max_len=4096 -timeout=5)
	$(call run-fuzz,wire,.build/debug/wire-fuzz,$(FUZZ_WIRE_LIMIT),-dict=Fuzz/wire.dict -max_len=4096 -timeout=10)
	$(call run-fuzz,http,.build/debug/http-fuzz,$(FUZZ_HTTP_LIMIT),-max_len=8192 -timeout=30)

# From PyPI, in a git-ignored virtualenv: the browser tests' driver, Python's websockets (a
# strict third-party client), jsonschema and PyYAML (the contract in docs/asyncapi.yaml), axe-core
# (axe-selenium-python: the accessibility audit), and kosoku, which runs Autobahn|Testsuite's
# cases against the transport. NB: it depends on the Makefile, so that a package added here is installed again.
$(VENV)/bin/kosoku: Makefile
	$(PYTHON) -m venv $(VENV) || { $(SUDO) apt-get install -y -qq python3-venv && $(PYTHON) -m venv $(VENV); }
	$(VENV)/bin/pip install -q selenium pytest websockets jsonschema pyyaml kosoku prometheus_client
	# NB: 3.0.0 bundles axe-core 4.10 (2.x's 3.1 reports false violations); it runs on 3.11
	# though it declares 3.12.
	$(VENV)/bin/pip install -q --ignore-requires-python axe-selenium-python==3.0.0
	touch $@

bench: deps $(VENV)/bin/kosoku
	$(SWIFT) build -c release --product standups-server
	$(SWIFT) build -c release --product standups-bench
	$(SWIFT) build -c release --product standups-send-floor
	$(SWIFT) run -c release --skip-build standups-bench --output docs/BENCHMARKS.md

clean:
	rm -rf .build build
