# The two entry points of the project (README.md opens with them):
#   make site   build and render the course into _site/index.html
#   make test   run every check: sync, clean, pytest, the site build (which executes every lesson), real browser
# Each creates .venv/ and installs what it needs (pip install -e '.[dev]') on first use; make test also installs
# Debian's Chromium for the browser test when it is missing. make lab opens the course in JupyterLab.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
NB_WORKERS ?= 2
# Lessons and tests use small matrices: threaded BLAS only adds synchronisation cost (benchmarks set their own).
ONE_THREAD := OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
# Python's bytecode cache (and pytest's cache of rewritten test modules) is written even where the environment turns
# it off: the tests start hundreds of Python processes, and collecting them took 12.6 s a worker without it, 7.1 s
# with it.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: coverage site test install chromium lab experiments sync check-sync nbtest pytest site-build browser-test bench bench-quick clean

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

## make lab: read and run the lessons in JupyterLab (installed into .venv/ by the dev extra). As root (containers,
## cloud machines) Jupyter needs --allow-root, which is added for you. More options: make lab JUPYTER_ARGS="--port=9999".
## make experiments: the four widget experiments as Voila apps on http://127.0.0.1:$(VOILA_PORT)/ (VOILA_ARGS passes
## more options to Voila).
JUPYTER_ARGS ?=
VOILA_PORT ?= 8866
VOILA_ARGS ?=
AS_ROOT = $(if $(filter 0,$(shell id -u)),--allow-root,)
lab: install
	$(BIN)/jupyter lab --notebook-dir=nbs --ServerApp.ip=127.0.0.1 $(AS_ROOT) $(JUPYTER_ARGS)

experiments: install
	@echo "make experiments: open http://127.0.0.1:$(VOILA_PORT)/voila/render/01_vbpca_convergence.ipynb (or 02_ard_pruning, 03_rjmcmc_explorer, 04_householder_stiefel); Ctrl-C stops"
	$(BIN)/voila --no-browser --port=$(VOILA_PORT) --Voila.ip=127.0.0.1 $(VOILA_ARGS) nbs/experiments

## Authoring: clean the notebooks, regenerate vbfa_lit/ from them (README.md is written by hand).
sync: install
	$(BIN)/nbdev-clean
	$(BIN)/python tools/export.py

## make site: export the library (tools/export.py: nbdev-export, unchanged modules keep their times), then Sphinx:
## myst-nb executes each notebook through its cache (_build/.jupyter_cache) and renders the pages into _build/html,
## which _site links to (myst-nb keeps its image files beside its output).
SPHINX := $(BIN)/python -m sphinx -b html -W --keep-going -j $(NB_WORKERS) -c docs -d _build/doctrees _build/src _build/html
site: install
	$(BIN)/python tools/export.py
	@$(MAKE) --no-print-directory site-build

## make test: everything, fastest checks first; any failure stops with a non-zero exit.
# Each notebook runs once: the site build executes every lesson (the same cells nbdev-test would run; a failing cell
# stops the build with its notebook, code and traceback), and the browser test runs the four experiments in Voila. make
# nbtest (nbdev-test) stays for authors. The site build is Sphinx's own incremental build: it re-reads only the
# notebooks that changed (or all of them when the library changed), and myst-nb's execution cache runs again only those
# whose code changed; after make site, with nothing changed, it takes seconds.
# pytest and the real-browser suite then run side by side: the browser suite keeps about one core busy (Chromium,
# MathJax, Voila's kernels). Each prints its report when it ends (--output-sync).
test: install chromium check-sync site-build
	@echo "make test: pytest and the real-browser suite, side by side (each prints its report when it ends)"
	@$(MAKE) --no-print-directory -j2 --output-sync=target pytest browser-test
	@echo "make test: all checks passed"

check-sync: install
	$(BIN)/python tools/check_sync.py

nbtest: install
	$(ONE_THREAD) $(BIN)/nbdev-test --n-workers $(NB_WORKERS)

pytest: install
	$(ONE_THREAD) $(BIN)/python -m pytest tests -m "not browser and not slow" -q -n $(NB_WORKERS) --dist worksteal

site-build: install
	mkdir -p _build/src
	$(ONE_THREAD) $(SPHINX)
	rm -rf _site && ln -s _build/html _site

## make coverage: pytest as make test runs it (after the same site build, whose run the lesson tests read), measuring
## which lines of vbfa_lit/ the tests run (report: htmlcov/)
coverage: install site-build
	$(ONE_THREAD) $(BIN)/python -m pytest tests -m "not browser and not slow" -q -n $(NB_WORKERS) --dist worksteal \
		--cov --cov-report=term:skip-covered --cov-report=html

browser-test: install chromium
	$(BIN)/python -m pytest tests/browser -m browser -q

BENCH_STAMP := $(VENV)/.bench-installed
$(BENCH_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[bench]'
	touch $@

## make bench: every comparison of benchmarks/ at full size (not part of make test; 30-60 min on 2 idle cores, and
## about 20 min more for bench_cluster); writes
## benchmarks/results/bench_*.json, which nbs/33_benchmarks.ipynb displays. BENCH_ARGS passes options to the harness,
## e.g. BENCH_ARGS="bench_stiefel" or BENCH_ARGS="--set dim200.cap_without=15000". make bench-quick: tiny sizes, one
## round, into benchmarks/results/quick/ (the smoke test tests/test_bench.py runs the first case of each measuring
## function of each file: --first-of-each).
bench: $(BENCH_STAMP)
	$(ONE_THREAD) $(BIN)/python benchmarks/harness.py $(BENCH_ARGS)

bench-quick: $(BENCH_STAMP)
	$(ONE_THREAD) $(BIN)/python benchmarks/harness.py --quick $(BENCH_ARGS)

clean:
	rm -rf _build _proc _site _docs .pytest_cache
