# The two entry points of the project (README.md opens with them):
#   make site   build and render the course into _site/index.html
#   make test   run every check: sync, clean, nbdev-test, pytest, README, site build, real browser
# Each creates .venv/ and installs what it needs (pip install -e '.[dev]') on first use.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
NB_WORKERS ?= 2

.PHONY: site test install sync readme check-sync check-readme nbtest pytest site-build browser-test bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

install: $(STAMP)

## Authoring: clean the notebooks, regenerate vbfa_lit/ and README.md from them.
sync: install
	$(BIN)/nbdev-clean
	$(BIN)/nbdev-export
	$(BIN)/python tools/readme.py

readme: install
	$(BIN)/python tools/readme.py

## make site: export the library, execute copies of the notebooks, process them with nbdev, render with Sphinx.
site: install
	$(BIN)/nbdev-export
	$(BIN)/python docs/build_site.py

## make test: everything, fastest checks first; any failure stops with a non-zero exit.
test: install check-sync nbtest pytest check-readme site-build browser-test
	@echo "make test: all checks passed"

check-sync: install
	$(BIN)/python tools/check_sync.py

nbtest: install
	$(BIN)/nbdev-test --n-workers $(NB_WORKERS)

pytest: install
	$(BIN)/python -m pytest tests -m "not browser" -q -n $(NB_WORKERS)

check-readme: install
	$(BIN)/python tools/readme.py --check

site-build: install
	$(BIN)/python docs/build_site.py

browser-test: install
	$(BIN)/python -m pytest tests/browser -m browser -q

clean:
	rm -rf _build _proc _site _docs .pytest_cache
