# The two commands README.md promises: `make demo` and `make test`. Both install what is missing
# first (scripts/install-deps), then build with CMake.
JOBS ?= $(shell nproc)
BUILD_RELEASE := build/release
BUILD_TEST := build/test

.PHONY: all deps build demo test bench format lint clean

all: build

deps:
	./scripts/install-deps

$(BUILD_RELEASE)/CMakeCache.txt:
	cmake --preset release

# The binary (and its torch plugin when libtorch is present); tests are built by `make test`.
build: deps $(BUILD_RELEASE)/CMakeCache.txt
	cmake --build $(BUILD_RELEASE) -j $(JOBS) --target mmprof

# Runs `mmprof baseline` on the embedded default dataset (generated on first use into
# ~/.cache/mmprof) with an emulated 60 ms training step, so all three phases are measured.
demo: build
	$(BUILD_RELEASE)/src/mmprof baseline --config configs/emulated-accelerator.yaml

$(BUILD_TEST)/CMakeCache.txt:
	cmake -S . -B $(BUILD_TEST) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMMPROF_WERROR=ON

test: deps $(BUILD_TEST)/CMakeCache.txt
	cmake --build $(BUILD_TEST) -j $(JOBS)
	cd $(BUILD_TEST) && ctest --output-on-failure -j $(JOBS) --timeout 600

bench: deps $(BUILD_RELEASE)/CMakeCache.txt
	cmake --build $(BUILD_RELEASE) -j $(JOBS) --target mmprof_loader_bench
	./bench/run-loader-bench.sh

format:
	git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

lint:
	git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run -Werror

clean:
	rm -rf build
