# cricket: `make demo` and `make test` work on a fresh clone.
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
PYTEST_ARGS ?=
# Test folders whose modules have a Cython implementation and a pure-Python twin:
# they run a second time with CRICKET_PUREPYTHON=1.
TWIN_TESTS = $(wildcard tests/xdr tests/rpcgen tests/rpc tests/preload tests/protocol tests/client tests/client_runtime)

.PHONY: all venv build test test-fast demo examples bench clean

all: build

$(VENV)/.installed: pyproject.toml setup.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip setuptools wheel 'Cython>=3.0'
	$(PY) -m pip install -q -e '.[test,bench]'
	@# cuda-python, cuda.core, NVRTC and CuPy for the driver-level tests; they skip with the reason without them.
	-$(PY) -m pip install -q -e '.[interop]' || echo "make: the interop extra could not be installed; its tests will skip"
	touch $@

venv: $(VENV)/.installed

# Incremental rebuild of the Cython extensions and generated codecs after edits.
build: venv
	$(PY) setup.py -q build_ext --inplace

test: build
	$(PY) -m pytest $(PYTEST_ARGS)
ifneq ($(TWIN_TESTS),)
	CRICKET_PUREPYTHON=1 $(PY) -m pytest $(PYTEST_ARGS) $(TWIN_TESTS)
endif

test-fast: build
	$(PY) -m pytest -x -q -m "not slow" $(PYTEST_ARGS)

demo: build
	$(PY) examples/demo.py

# The CUDA sample programs, built with `nvcc -cudart shared` into build/examples.
examples: build
	$(PY) examples/build.py build/examples

bench: build
	$(PY) -m cricket bench

clean:
	rm -rf build $(VENV) *.egg-info .pytest_cache
	find cricket -name '*.so' -delete
