# mcp-notebook developer tasks. Needs python3 (3.10+); test and bench also node 22+ and npm (the
# locked peers require 22); lab needs no Node.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test

PYTHON ?= python3
VENV := .venv
VENV_PY := $(VENV)/bin/python
BASE_STAMP := $(VENV)/.stamp-base
VENV_STAMP := $(VENV)/.stamp-test
LAB_STAMP := $(VENV)/.stamp-lab
PEERS := tests/peers
PEERS_STAMP := $(PEERS)/node_modules/.stamp
# The Python SDK 1.x servers of the field (FastMCP 1.x, mcp-proxy): a venv of their own, as .venv pins mcp 2.x.
SDK1_VENV := .venv-sdk1
SDK1_REQUIREMENTS := $(PEERS)/sdk1/requirements.txt
SDK1_STAMP := $(SDK1_VENV)/.stamp
PYTEST_ARGS ?=
# Jupyter refuses to start as root without --allow-root (containers, CI machines).
LAB_ARGS ?= $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: .venv .venv-sdk1 peers test test-fast lab bench clean

# Virtualenv with the package (editable) and its test extra; redone when pyproject.toml changes.
.venv: $(VENV_STAMP)

$(BASE_STAMP):
	$(PYTHON) -m venv $(VENV)
	$(VENV_PY) -m pip install --upgrade pip
	touch $@

$(VENV_STAMP): pyproject.toml $(BASE_STAMP)
	$(VENV_PY) -m pip install -e '.[test]'
	touch $@

# Node test peers (@modelcontextprotocol/server-everything) and pyright (tests/test_style.py), exactly as locked.
peers: $(PEERS_STAMP)

$(PEERS_STAMP): $(PEERS)/package-lock.json $(PEERS)/package.json
	npm ci --prefix $(PEERS) --no-audit --no-fund
	touch $@

# Python SDK 1.x test peers (mcp-server-calculator, mcp-proxy), exactly as pinned.
.venv-sdk1: $(SDK1_STAMP)

$(SDK1_STAMP): $(SDK1_REQUIREMENTS)
	$(PYTHON) -m venv $(SDK1_VENV)
	$(SDK1_VENV)/bin/python -m pip install --upgrade pip
	$(SDK1_VENV)/bin/python -m pip install -r $(SDK1_REQUIREMENTS)
	touch $@

test: $(VENV_STAMP) $(PEERS_STAMP) $(SDK1_STAMP)
	$(VENV_PY) -m pytest $(PYTEST_ARGS)

# The tests that need no browser, Jupyter kernel, JupyterHub or Node (so no `make peers`), and none
# marked slow: the markers are registered in pyproject.toml.
FAST_MARKERS := not kernel and not browser and not node and not slow
test-fast: $(VENV_STAMP) $(SDK1_STAMP)
	$(VENV_PY) -m pytest -m "$(FAST_MARKERS)" $(PYTEST_ARGS)

# The lab extra only (JupyterLab, a kernel, pandas): the test extra stays `make test`'s.
$(LAB_STAMP): pyproject.toml $(BASE_STAMP)
	$(VENV_PY) -m pip install -e '.[lab]'
	touch $@

# The quickstart runs on the demo server in the package: no Node peers needed. The venv's bin comes
# first on PATH, so `python` in a cell's server command (`%mcp connect x -- python server.py`, the
# shipped notebooks/mcp.json) is the kernel's, with mcp_notebook installed; the repository is Lab's
# root, so the README and every lesson are in its file browser.
lab: $(LAB_STAMP)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" VIRTUAL_ENV="$(CURDIR)/$(VENV)" \
	  $(VENV)/bin/jupyter lab --ServerApp.root_dir="$(CURDIR)" \
	  --LabApp.default_url=/lab/tree/notebooks/01-quickstart.ipynb --ip=127.0.0.1 $(LAB_ARGS)

bench: $(VENV_STAMP) $(PEERS_STAMP)
	$(VENV_PY) bench/ping.py

clean:
	rm -rf $(VENV) $(SDK1_VENV) $(PEERS)/node_modules build dist .pytest_cache *.egg-info
	find . -name __pycache__ -type d -prune -not -path './.git/*' -exec rm -rf {} +
