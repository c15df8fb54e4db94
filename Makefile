# The two entry points of the project (README.md opens with them):
#   make site   build and render the course into _site/index.html
#   make test   run every check: sync, clean, nbdev-test, pytest, README, site build, real browser
# Each creates .venv/ and installs what it needs (pip install -e '.[dev]') on first use; make test also installs
# Debian's Chromium for the browser test when it is missing. make lab opens the course in JupyterLab.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
NB_WORKERS ?= 2
# Lessons and tests use small matrices: threaded BLAS only adds synchronisation cost (benchmarks set their own).
ONE_THREAD := OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

.PHONY: site test install chromium lab sync readme check-sync check-readme nbtest pytest site-build browser-test bench bench-quick clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

install: $(STAMP)

## Debian's Chromium, which the real-browser test drives (never a browser downloaded by Playwright).
chromium:
	@if command -v chromium >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" -eq 0 ]; then SUDO=""; \
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo"; \
	else echo "make: the browser test needs Debian's Chromium. Install it with: sudo apt-get install -y chromium"; exit 1; fi; \
	echo "make: installing Debian's chromium for the browser test"; \
	$$SUDO apt-get install -y -q chromium >/dev/null || { $$SUDO apt-get update -q >/dev/null && $$SUDO apt-get install -y -q chromium >/dev/null; }; \
	command -v chromium >/dev/null 2>&1 || { echo "make: could not install chromium"; exit 1; }

## make lab: read and run the lessons in JupyterLab (installed into .venv/ by the dev extra).
lab: install
	$(BIN)/jupyter lab --notebook-dir=nbs

## Authoring: clean the notebooks, regenerate vbfa_lit/ and README.md from them.
sync: install
	$(BIN)/nbdev-clean
	$(BIN)/nbdev-export
	$(ONE_THREAD) $(BIN)/python tools/readme.py

readme: install
	$(ONE_THREAD) $(BIN)/python tools/readme.py

## make site: export the library, execute copies of the notebooks, process them with nbdev, render with Sphinx.
site: install
	$(BIN)/nbdev-export
	$(ONE_THREAD) $(BIN)/python docs/build_site.py

## make test: everything, fastest checks first; any failure stops with a non-zero exit.
test: install chromium check-sync nbtest pytest check-readme site-build browser-test
	@echo "make test: all checks passed"

check-sync: install
	$(BIN)/python tools/check_sync.py

nbtest: install
	$(ONE_THREAD) $(BIN)/nbdev-test --n-workers $(NB_WORKERS)

pytest: install
	$(ONE_THREAD) $(BIN)/python -m pytest tests -m "not browser and not slow" -q -n $(NB_WORKERS)

check-readme: install
	$(ONE_THREAD) $(BIN)/python tools/readme.py --check

site-build: install
	$(ONE_THREAD) $(BIN)/python docs/build_site.py

browser-test: install chromium
	$(BIN)/python -m pytest tests/browser -m browser -q

BENCH_STAMP := $(VENV)/.bench-installed
$(BENCH_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[bench]'
	touch $@

## make bench: every comparison of benchmarks/ at full size (not part of make test; 30-60 min on 2 idle cores); writes
## benchmarks/results/bench_*.json, which nbs/10_benchmarks.ipynb displays. BENCH_ARGS passes options to the harness,
## e.g. BENCH_ARGS="bench_stiefel" or BENCH_ARGS="--set dim200.cap_without=15000". make bench-quick: tiny sizes, one
## round, into benchmarks/results/quick/ (the smoke test tests/test_bench.py runs the same per file).
bench: $(BENCH_STAMP)
	$(ONE_THREAD) $(BIN)/python benchmarks/harness.py $(BENCH_ARGS)

bench-quick: $(BENCH_STAMP)
	$(ONE_THREAD) $(BIN)/python benchmarks/harness.py --quick $(BENCH_ARGS)

clean:
	rm -rf _build _proc _site _docs .pytest_cache
