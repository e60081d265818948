# Two entry points for a fresh machine (see README): `make demo` and `make test`.
# Each creates .venv with Python >= 3.12 if missing, installs bayesjudge, then runs.
VENV  ?= .venv
PY    := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
export OPENBLAS_NUM_THREADS ?= 1
export MPLBACKEND ?= Agg

.PHONY: demo test test-fast test-generic lint benchmark notebooks clean

$(STAMP): pyproject.toml
	@test -x $(PY) || { PYBIN=$$(tools/find-python) && echo "creating $(VENV) with $$PYBIN" && $$PYBIN -m venv $(VENV); }
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/bayesjudge demo

lint: $(STAMP)
	$(VENV)/bin/ruff check .

# The suite in JOBS worker processes (pytest-xdist), one test file per worker at a time
# (--dist loadfile: a file's session fixtures and compiled graphs stay in one process):
# ~23 min on 2 cores against ~34 min in one process. JOBS=0 runs it in this process.
JOBS ?= 2
XDIST := $(if $(filter 0,$(JOBS)),-p no:xdist,-n $(JOBS) --dist loadfile)

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -m "slow or not slow" -q -rs --durations=25 $(XDIST)

test-fast: $(STAMP)
	$(PY) -m pytest -m "not slow" -q $(XDIST)

# The suite as another machine sees it: numba code for a generic x86-64 CPU (not this
# host's), and every compiled-code cache empty (bayesjudge's, numba's, PyTensor's) in a
# temporary folder removed afterwards. See CONTRIBUTING ("Tests that pass on any machine").
test-generic: $(STAMP)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	NUMBA_CPU_NAME=generic BAYESJUDGE_CACHE_DIR="$$tmp/bayesjudge" NUMBA_CACHE_DIR="$$tmp/numba" \
	PYTENSOR_FLAGS="base_compiledir=$$tmp/pytensor" \
	$(PY) -m pytest -m "slow or not slow" -q -rs -p no:cacheprovider --durations=10 $(XDIST)

# Peers timed against bayesjudge (evalica, choix, crowd-kit) live in the bench extra only.
# run_all.py runs every benchmarks/bench_*.py and prints one table (benchmarks/TABLE.md);
# ~25 min on 2 cores. `$(PY) benchmarks/run_all.py --quick` is a < 3 min smoke test.
benchmark: $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,bench]'
	$(PY) benchmarks/run_all.py

# Rebuild notebooks/*.ipynb from their jupytext sources (notebooks/*.py) and execute
# them at full size, storing outputs and figures (tools/execute_notebooks --fast: quick).
notebooks: $(STAMP)
	$(PY) tools/execute_notebooks

clean:
	rm -rf $(VENV)
