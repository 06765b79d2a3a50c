# Thin wrapper around CMake: `make run` and `make test` are the README's two commands.
BUILD ?= build
JOBS ?= $(shell nproc)
# Warnings are errors by default, so `make run` and `make test` share one build
# configuration (and one build); WERROR=OFF relaxes it for other compilers.
WERROR ?= ON

.PHONY: all deps build run test sanitize bench format format-check tidy clean

all: build

deps:
	@.ci/install-deps

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DFRUGAL_WERROR=$(WERROR) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The main job on the built-in default model.
run: build
	./$(BUILD)/frugal workflow

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The tests under AddressSanitizer + UndefinedBehaviorSanitizer: unit, Vulkan,
# the fuzzer and the slow tests in their reduced form (docs/TESTING.md). Builds
# only what those tests need.
sanitize: deps
	@cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug -DFRUGAL_SANITIZE=ON -DFRUGAL_WERROR=$(WERROR) >/dev/null
	@cmake --build $(BUILD)-asan -j $(JOBS) --target frugal_tests
	cd $(BUILD)-asan && ctest --output-on-failure -j $(JOBS)

# Style: .clang-format over every C++ file git tracks (format rewrites, format-check fails on a diff).
CXX_FILES = $(shell git ls-files '*.cpp' '*.h' '*.hpp')
format:
	@clang-format -i $(CXX_FILES)
format-check:
	@clang-format --dry-run -Werror $(CXX_FILES) && echo "format-check: $(words $(CXX_FILES)) files match .clang-format"

# .clang-tidy's checks over every .cpp in the build's compile database (minutes; not in CI).
tidy: deps
	@cmake -S . -B $(BUILD) -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
	run-clang-tidy -p $(BUILD) -quiet $(filter %.cpp,$(CXX_FILES))

bench: build
	./$(BUILD)/frugal bench

clean:
	rm -rf $(BUILD) $(BUILD)-asan
