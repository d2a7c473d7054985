# The two commands README.md promises: `make demo` and `make test`. Both install what is missing
# first (scripts/install-deps: the demo only what building and its job need, the tests the rest),
# then build with CMake.
JOBS ?= $(shell nproc)
BUILD_RELEASE := build/release
BUILD_TEST := build/test
BUILD_FUZZ := build/fuzz
FUZZ_SECONDS ?= 20
FUZZ_TARGETS := tar_index image_probe video_probe config decode

PREFIX ?= /usr/local

.PHONY: all deps deps-demo build install deb demo test bench speed-bench fuzz sanitize asan tsan format lint clean

all: build

deps:
	./scripts/install-deps

deps-demo:
	./scripts/install-deps --demo

$(BUILD_RELEASE)/CMakeCache.txt:
	cmake --preset release

# The binary (and its torch plugin when libtorch is present); tests are built by `make test`.
build: deps-demo $(BUILD_RELEASE)/CMakeCache.txt
	cmake --build $(BUILD_RELEASE) -j $(JOBS) --target mmprof

# The release build installed under PREFIX (cmake/MmprofInstall.cmake): bin/mmprof, its plugins in
# lib/mmprof/, the layers' static libraries, include/mmprof/ and the CMake package lib/cmake/mmprof/.
install: deps-demo $(BUILD_RELEASE)/CMakeCache.txt
	cmake --build $(BUILD_RELEASE) -j $(JOBS) --target mmprof_installed
	cmake --install $(BUILD_RELEASE) --prefix $(PREFIX)

# The same as a Debian package under /usr (cmake/MmprofPackage.cmake): build/release/mmprof_*.deb,
# then `apt-get install ./build/release/mmprof_VERSION_amd64.deb`.
deb: deps-demo $(BUILD_RELEASE)/CMakeCache.txt
	cmake --build $(BUILD_RELEASE) -j $(JOBS) --target mmprof_installed
	cd $(BUILD_RELEASE) && cpack -G DEB

# The main use on the embedded default dataset (generated on first use into ~/.cache/mmprof):
# first the stand-in loader's baseline with an emulated 60 ms step (all three phases), then a
# plain ImageFolder training script over the same images, run and observed by mmprof (its
# DataLoader through the zero-code hook), and the report on it with its ab commands.
# DEMO_BUILD: the build whose mmprof runs it; CI passes the one `make test` has just built
# (DEMO_BUILD=build/test) rather than build a second tree of the same sources.
DEMO := build/demo
DEMO_BUILD ?= $(BUILD_RELEASE)
DEFAULT_DATA = $${XDG_CACHE_HOME:-$$HOME/.cache}/mmprof/default-v1
demo: $(if $(filter $(BUILD_RELEASE),$(DEMO_BUILD)),build)
	$(DEMO_BUILD)/src/mmprof baseline --config configs/emulated-accelerator.yaml --force --out $(DEMO)/stand-in
	./scripts/demo-imagefolder "$(DEFAULT_DATA)" $(DEMO)/imagefolder
	$(DEMO_BUILD)/src/mmprof baseline --warmup-steps 5 --steps 40 --force --out $(DEMO)/job -- \
	  /usr/bin/python3 examples/train_imagefolder.py $(DEMO)/imagefolder --epochs 20
	$(DEMO_BUILD)/src/mmprof report $(DEMO)/job --out $(DEMO)/report
	@echo "report: $(DEMO)/report/report.md"

# Line tables only (-g1): backtraces keep file:line, and the build takes a third less time than
# with full debug information (-g).
TEST_CXXFLAGS := -O2 -g1 -DNDEBUG
$(BUILD_TEST)/CMakeCache.txt:
	cmake -S . -B $(BUILD_TEST) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMMPROF_WERROR=ON \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(TEST_CXXFLAGS)"

test: deps $(BUILD_TEST)/CMakeCache.txt
	cmake --build $(BUILD_TEST) -j $(JOBS)
	cd $(BUILD_TEST) && ctest --output-on-failure -j $(JOBS) --timeout 600

bench: deps $(BUILD_RELEASE)/CMakeCache.txt
	cmake --build $(BUILD_RELEASE) -j $(JOBS) --target mmprof_loader_bench
	./bench/run-loader-bench.sh

# mmprof's loader against PyTorch's DataLoader and the hardware limit (bench/README.md);
# results and plots go to docs/performance/.
speed-bench: $(BUILD_RELEASE)/CMakeCache.txt
	./scripts/install-deps --bench
	cmake --build $(BUILD_RELEASE) -j $(JOBS) --target mmprof mmprof_video_bench
	/usr/bin/python3 bench/speed_bench.py --build $(BUILD_RELEASE)

$(BUILD_FUZZ)/CMakeCache.txt:
	cmake -S . -B $(BUILD_FUZZ) -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMMPROF_BUILD_FUZZ=ON -DMMPROF_BUILD_TESTS=OFF \
	  -DMMPROF_BUILD_BENCH=OFF -DMMPROF_WITH_CUDA=OFF -DMMPROF_WITH_TORCH=OFF

# libFuzzer (clang, ASan + UBSan): each target for FUZZ_SECONDS from the seeds in
# tests/fuzz/corpus; new inputs go to build/fuzz/corpus, a crash to build/fuzz/crash-* and fails.
fuzz: deps $(BUILD_FUZZ)/CMakeCache.txt
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS))
	for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(BUILD_FUZZ)/corpus/$$t && \
	  $(BUILD_FUZZ)/tests/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
	    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=$(BUILD_FUZZ)/ \
	    $(BUILD_FUZZ)/corpus/$$t tests/fuzz/corpus/$$t || exit 1; \
	done

# The suite under AddressSanitizer + UndefinedBehaviorSanitizer, and the tests that exercise
# threads and shared memory (worker threads, the resource sampler's thread, the lock-free trace
# arena, the generator's encoder threads) under ThreadSanitizer: CMakePresets.json asan-ubsan, tsan.
# Any report fails the run. Deliberate crashes (the fault-injection hook raises SIGSEGV in a
# worker) must stay signals, so the sanitizers leave SIGSEGV alone (handle_segv=0).
asan: export ASAN_OPTIONS := handle_segv=0:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1
asan: export UBSAN_OPTIONS := halt_on_error=1:print_stacktrace=1
tsan: export TSAN_OPTIONS := handle_segv=0:halt_on_error=1:second_deadlock_stack=1
# The tsan preset builds only tests/concurrency (MMPROF_TEST_AREAS); of its files, these tests.
# Left out: a stuck worker *thread* is abandoned still referring to the loader's state, which the
# test then frees (docs/reliability.md, "Sanitizers").
TSAN_TESTS := TraceArena.*:RunDirTest.TheSamplerThreadAndTheRunThreadWriteAtOnce:TracerTest.*:ResourceSamplerTest.*:GenDataset.*:PhaseMetricsTest.*:Loader.*:Pools/*:SpeedLevers.*:WorkerFaults.*-WorkerFaults.AHungWorkerThreadFailsTheRunInsteadOfHangingIt

sanitize: asan tsan

# Not run again under ASan: no C++ of mmprof's runs in them that the suite does not run already
# (the Python hook's own tests; the install tree and .deb; the completions generated from --help;
# ab on a torch job, two minutes of Python whose C++ side, ab's trials and the job's following,
# the AbCliTest and other ExternalCli tests run).
ASAN_SKIP := ^(PythonHook|PackageConsumer|ShellCompletion|ExternalCli.AbOnTheJobAdoptsMoreWorkersAndCatchesAFalsePreservingClaim)$$

asan: deps
	cmake --preset asan-ubsan
	cmake --build build/asan-ubsan -j $(JOBS)
	cd build/asan-ubsan && ctest --output-on-failure -j $(JOBS) --timeout 900 -E '$(ASAN_SKIP)'

tsan: deps
	cmake --preset tsan
	cmake --build build/tsan -j $(JOBS) --target mmprof_concurrency_tests
	build/tsan/tests/mmprof_concurrency_tests --gtest_filter='$(TSAN_TESTS)'

format:
	git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

# clang-format, then clang-tidy (.clang-tidy) on every source of src/ through build/test's
# compile_commands.json. The torch plugin is left out: clang 14 cannot parse libtorch 1.13's
# headers (c10::IValue is incomplete where std::vector needs it), so tidy would only report that.
lint: $(BUILD_TEST)/CMakeCache.txt
	git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run -Werror
	run-clang-tidy -p $(BUILD_TEST) -j $(JOBS) -quiet '^$(CURDIR)/src/(?!step/torch/).*\.cpp$$' > $(BUILD_TEST)/clang-tidy.log 2>&1 || \
	  { grep -E 'error:|warning:' $(BUILD_TEST)/clang-tidy.log; exit 1; }

clean:
	rm -rf build
