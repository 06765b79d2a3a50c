# Thin wrapper around CMake: `make run` and `make test` are the README's two commands.
BUILD ?= build
JOBS ?= $(shell nproc)
# Warnings are errors by default, so `make run` and `make test` share one build
# configuration (and one build); WERROR=OFF relaxes it for other compilers.
WERROR ?= ON

.PHONY: all deps build run test sanitize bench clean

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

# Unit tests under AddressSanitizer + UndefinedBehaviorSanitizer.
sanitize: deps
	@cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug -DFRUGAL_SANITIZE=ON -DFRUGAL_WERROR=ON >/dev/null
	@cmake --build $(BUILD)-asan -j $(JOBS)
	cd $(BUILD)-asan && ctest --output-on-failure -j $(JOBS) -L unit

bench: build
	./$(BUILD)/frugal bench

clean:
	rm -rf $(BUILD) $(BUILD)-asan
