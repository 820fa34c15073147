# The two commands that matter: `make demo` and `make check`. See README.md.
HFX_VENV ?= $(HOME)/.cache/hfx/venv
PREFIX ?= /usr/local
BUILD ?= build
JOBS ?= 2
export HFX_VENV

.PHONY: all build deps venv check unit sanitize tsan oracle oracle-sanitized demo install clean fuzz bench

all: build

build:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX) \
	    -DHFX_WERROR=$${HFX_WERROR:-OFF} -DHFX_BUILD_TESTS=ON >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory

# System packages the build and the tests need (Debian); installs only what is missing.
deps:
	@scripts/install-deps.sh

# The Python oracle virtualenv (transformers, torch, onnxruntime, ...): created when missing.
venv:
	@scripts/setup-venv.sh

# Unit tests: once in the release build, once under AddressSanitizer + UBSan.
unit: build
	@ctest --test-dir $(BUILD) --output-on-failure
sanitize:
	@cmake -S . -B build-san -DCMAKE_BUILD_TYPE=Debug -DHFX_SANITIZE=ON -DHFX_WERROR=ON -DHFX_BUILD_TESTS=ON >/dev/null
	@cmake --build build-san -j $(JOBS) -- --no-print-directory
	@ctest --test-dir build-san --output-on-failure

# Exports in threads of one process under ThreadSanitizer, compared byte for byte with the same
# exports run one by one.
tsan:
	@cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHFX_TSAN=ON -DHFX_WERROR=ON -DHFX_BUILD_TESTS=OFF >/dev/null
	@cmake --build build-tsan -j $(JOBS) --target threads -- --no-print-directory
	@TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 build-tsan/threads examples/tiny-llama build-tsan/threads-work

# The oracle suite on every core (pytest-xdist; ORACLE_JOBS=0 runs it in this process): each test
# builds its own checkpoints and exports under its own tmp dirs, so workers share nothing; a worker
# that is done takes queued tests from a busy one (worksteal).
ORACLE_JOBS ?= auto
oracle: build venv
	@HFX_BIN=$(CURDIR)/$(BUILD)/hfx $(HFX_VENV)/bin/python -m pytest -q -n $(ORACLE_JOBS) --dist worksteal \
	    tests/oracle $(PYTEST_ARGS)

# The CLI and bad-input tests again, against the sanitized binary: every malformed file must be
# refused without a single out-of-bounds read; and the exports that rewrite config.json or gather a padded
# encoder's rows (OpenVINO's stateful VLM layouts), and the seed's VLM split in every format (its calls' None
# keywords: .pt2 constant inputs, ExecuTorch's None arguments).
oracle-sanitized: sanitize venv
	@ASAN_OPTIONS=detect_leaks=1 HFX_BIN=$(CURDIR)/build-san/hfx $(HFX_VENV)/bin/python -m pytest -q -n $(ORACLE_JOBS) \
	    tests/oracle/test_bad_input.py tests/oracle/test_cli.py tests/oracle/test_transaction.py \
	    tests/oracle/test_vlm.py::test_vlm_pipeline_llava_next tests/oracle/test_vlm.py::test_vlm_pipeline_gemma4 \
	    tests/oracle/test_vlm.py::test_llava_next_config_newline_refused \
	    tests/oracle/test_vlm_seed.py::test_seed_runners_generate_from_the_split \
	    tests/oracle/test_vlm_seed.py::test_seed_runners_generate_from_the_executorch_split

check: deps
	@$(MAKE) --no-print-directory build HFX_WERROR=ON
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory sanitize
	@$(MAKE) --no-print-directory tsan
	@$(MAKE) --no-print-directory oracle
	@$(MAKE) --no-print-directory oracle-sanitized

# The first command on a fresh machine: installs the build dependencies it lacks (not the venv).
demo: deps
	@$(MAKE) --no-print-directory build
	@scripts/demo.sh $(BUILD)/hfx

install: build
	@cmake --install $(BUILD)

# Coverage-guided fuzzing of every parser of untrusted bytes (clang + libFuzzer); see
# tests/fuzz/README.md. FUZZ_SECONDS per harness, FUZZ_JOBS cores.
fuzz: build
	@HFX_BIN=$(CURDIR)/$(BUILD)/hfx scripts/fuzz.sh

# Benchmarks against the Python exporters and the I/O floor (not part of check; minutes).
bench: build venv
	@$(HFX_VENV)/bin/python -m pip install -q --disable-pip-version-check -r bench/requirements.txt
	@HFX_BIN=$(CURDIR)/$(BUILD)/hfx $(HFX_VENV)/bin/python bench/run.py $(BENCH_ARGS)

clean:
	@rm -rf $(BUILD) build-san build-tsan build-fuzz
