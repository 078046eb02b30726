# The two commands of the README:
#   make serve   set up, build, make the example models, start the server on them
#   make test    set up, build, make the test models, run every test
# Everything else here is a step of those two.

BUILD ?= build
PYTHON ?= /usr/bin/python3
space := $(subst ,, )
STORE ?= examples/model-store
CMAKE_FLAGS ?=
# ccache (CMakeLists.txt) with paths relative to the clone and no working
# directory in the hash, so that every clone and build folder of the
# repository on a machine shares one cache.
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_NOHASHDIR ?= 1
# ... and the files that use a precompiled header (INFERD_PCH, CMakeLists.txt) cached too.
export CCACHE_SLOPPINESS ?= pch_defines,time_macros

.PHONY: all setup build models serve test unit e2e clean image image-test test-asan test-tsan

all: build

setup:
	@bash scripts/setup.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: setup $(BUILD)/build.ninja
	cmake --build $(BUILD)

models: setup
	$(PYTHON) tools/make_models.py --store $(STORE)

serve: build models
	$(BUILD)/inferd serve --model-store $(STORE)

# Two tests at a time: the unit tests run beside the e2e suite, the longest.
test: build models
	cd $(BUILD) && ctest --output-on-failure -j2

# Sanitizer runs (docs/ROBUSTNESS.md), each in a build folder of its own:
#   make test-asan  every test (unit, fuzz corpus replay, e2e against the
#                   instrumented binary) under AddressSanitizer + UBSan
#   make test-tsan  the scheduler, repository, HTTP, common and dashboard unit tests under
#                   ThreadSanitizer (the threads with locks of their own)
# -O1 with assertions on: fast enough for the e2e suite's timeouts, and the
# reports keep their line numbers (-g1, CMakeLists.txt). Any report fails;
# the leak suppressions (libtorch's and ONNX Runtime's own) are explained in their file.
SANITIZE_FLAGS = -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O1
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
TSAN_TESTS = unit_scheduler unit_repository unit_http unit_common unit_dashboard

#
# test-asan runs every server of the e2e suite confined to one core
# (INFERD_E2E_CPUS, tests/e2e/conftest.py), as a slow machine would run it: the
# instrumented binary on one core is the slowest the suite meets, and no test
# may depend on the machine's speed or its number of cores (`make test` runs
# the same suite on every core). ASAN_E2E_CPUS= (empty) gives it every core.
ASAN_E2E_CPUS ?= 0
test-asan: setup models
	cmake -S . -B $(ASAN_BUILD) -G Ninja $(SANITIZE_FLAGS) -DINFERD_SANITIZE=address,undefined
	cmake --build $(ASAN_BUILD)
	cd $(ASAN_BUILD) && INFERD_E2E_CPUS=$(ASAN_E2E_CPUS) UBSAN_OPTIONS=print_stacktrace=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitizers/lsan.supp ctest --output-on-failure

test-tsan: setup
	cmake -S . -B $(TSAN_BUILD) -G Ninja $(SANITIZE_FLAGS) -DINFERD_SANITIZE=thread
	cmake --build $(TSAN_BUILD) --target $(TSAN_TESTS)
	cd $(TSAN_BUILD) && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
	  ctest --output-on-failure -R '^($(subst $(space),|,$(TSAN_TESTS)))$$'

# The container image of deploy/image/ (root, the Debian mirror; minutes) and
# its test: the image's root file system serves the example store under chroot.
image: build
	@bash scripts/setup.sh image
	BIN=$(BUILD)/inferd OUT=$(BUILD)/image deploy/image/build.sh

image-test: image models
	OUT=$(BUILD)/image STORE=$(STORE) deploy/image/chroot_test.sh

.PHONY: thread-safety
# Clang's thread-safety analysis (-Wthread-safety -Werror) over src/, using
# the compile commands of $(BUILD); syntax only, no second build.
thread-safety: build
	@bash scripts/setup.sh thread-safety
	$(PYTHON) tools/check_thread_safety.py --build $(BUILD)

.PHONY: fuzz fuzz-build
# Fuzzing (clang + libFuzzer, ASan, UBSan): `make fuzz FUZZ_SECONDS=600` runs
# every target of tests/fuzz for that long, one after the other
# (FUZZ_TARGETS="v2_json payload" for some; FUZZ_JOBS=2 for two at once).
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
fuzz-build:
	@bash scripts/setup.sh fuzz
	cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_COMPILER=clang++-14 -DINFERD_FUZZ=ON -DINFERD_SKIP_DIRS="bench;app;backend/torch"
	cmake --build $(FUZZ_BUILD) --target fuzz_targets

fuzz: fuzz-build
	bash tests/fuzz/run_fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

clean:
	rm -rf $(BUILD)
