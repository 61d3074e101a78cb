# Entry points: `make run` (set-up, build, trace with the demo) and `make test`.
BUILD ?= build
JOBS ?= $(shell nproc)

# make install [PREFIX=/usr/local] [DESTDIR=...]: docs/install.md
.PHONY: all setup build install run test unit integration fuzz bench sanitize tsan tidy format format-check clean

all: build

setup:
	@scripts/setup.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja

build: $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

PREFIX ?= /usr/local
install: setup $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target eacgm eacgm-sched eacgm_hook
	cmake --install $(BUILD) --prefix $(PREFIX)

# Only what it uses: the agent (with its BPF objects and the web UI), the demo program and
# the Python module of the README's snippet (eacgm_make_run). The agent serves the web UI
# (it prints the address) with the demo traced beside it; Ctrl-C stops both.
run: setup $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target eacgm_make_run
	$(BUILD)/eacgm serve --demo

test: setup build
	cd $(BUILD) && ctest --output-on-failure -j 1

unit: build
	cd $(BUILD) && ctest --output-on-failure -L unit

integration: build
	cd $(BUILD) && ctest --output-on-failure -L integration

sanitize: setup
	cmake -S . -B build-asan -G Ninja -DEACGM_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ctest --output-on-failure -L unit

# ThreadSanitizer: the unit tests (the sampling threads, the snapshot mailbox, the
# published counters) in a build of their own.
tsan: setup
	cmake -S . -B build-tsan -G Ninja -DEACGM_TSAN=ON -DCMAKE_BUILD_TYPE=Debug
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan.supp" ctest --output-on-failure -L unit

# The libFuzzer targets (built with clang when it has libFuzzer), 60 s each.
fuzz: build
	cd $(BUILD) && ctest --output-on-failure -L fuzz

tidy: build
	run-clang-tidy -p $(BUILD) -quiet 'src/.*\.cpp$$'

# C and C++ sources except the BPF programs (their include order is fixed by vmlinux.h).
FORMAT_FILES = git ls-files '*.cpp' '*.h' '*.c' '*.cu' | grep -v -e '^bpf/' -e '\.bpf\.c$$'

format:
	$(FORMAT_FILES) | xargs clang-format -i

format-check:
	$(FORMAT_FILES) | xargs clang-format --dry-run -Werror

bench: setup build
	bench/run.sh $(BUILD)

clean:
	rm -rf $(BUILD) build-asan build-tsan
