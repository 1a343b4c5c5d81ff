# make run  - set up a virtual environment from nothing, then run the main job (the web app)
# make test - set up, then ruff, mypy and the whole test suite (on every core: pytest-xdist)
# make test-fast - the suite without its slow integration tests (tests/conftest.py's SLOW)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# SkyPilot and dstack, test-only, in their own environment: skypilot 0.14 pins click<8.2, which
# huggingface_hub 2.x (click>=8.4.2) cannot share (docs/export.md). The tests load exports with them.
LVENV := .venv-launchers
LSTAMP := $(LVENV)/.installed
export WHICHGPU_LAUNCHERS_PYTHON := $(abspath $(LVENV))/bin/python

HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test test-fast lint typecheck setup clean validate calibrate calibrate-serving baseline \
	bench bench-web bench-web-heavy bench-recommend bench-answers answers-fixture bench-store bench-rss bench-service i18n screenshots \
	check-counts gpu-check gpu-check-wheels readme-accuracy readme-accuracy-check

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

$(LSTAMP): pyproject.toml
	@test -x $(LVENV)/bin/python || $(PYTHON) -m venv $(LVENV)
	$(LVENV)/bin/python -m pip install --quiet --upgrade pip
	$(LVENV)/bin/python -m pip install --quiet $$($(PYTHON) -c "import tomllib; \
	  print(' '.join(repr(r) for r in tomllib.load(open('pyproject.toml', 'rb')) \
	  ['project']['optional-dependencies']['launchers']))" | tr -d "'")
	@touch $(LSTAMP)

setup: $(STAMP) $(LSTAMP)

# The web app and REST API on the shipped catalog, presets and local price store (no network).
run: $(STAMP)
	@echo "Open http://$(HOST):$(PORT)/ in a browser (REST API under /api/v1, docs at /docs)."
	$(BIN)/whichgpu serve --host $(HOST) --port $(PORT)

lint: $(STAMP)
	$(BIN)/ruff check src tests

# mypy over src/whichgpu with zero errors (issue 16): its settings are pyproject.toml's
# [tool.mypy] (check_untyped_defs; missing imports ignored only for the untyped packages named
# in its overrides).
typecheck: $(STAMP)
	$(BIN)/mypy

# pytest-xdist: one worker per core (PYTEST_WORKERS=0: all in one process). Tests go one by one
# to whichever worker is free, in tests/conftest.py's order (the longest first:
# --no-loadscope-reorder keeps it; xdist's own order puts the groups with the most tests
# first); a file with a module fixture (a served app, a browser) runs whole in one worker, or
# in the parts conftest.SPLIT names (tests/conftest.py groups it).
PYTEST_WORKERS ?= auto
XDIST := -n $(PYTEST_WORKERS) --dist loadgroup --no-loadscope-reorder
# Bytecode kept (__pycache__, git-ignored) even where the environment turns it off: each xdist
# worker otherwise compiles every module and rewrites every test file again (collecting the
# suite: 15 CPU s without the cache, 7 s with it, on a shared 2-core machine).
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest

# mypy runs beside the tests, not before them: one process on one core (about 12 CPU-s on a
# fresh clone, 2026-12-07), it would hold both cores' tests back while it alone ran. Its report
# is printed after the tests' and either failing fails the target (as before: the same checks).
test: $(STAMP) $(LSTAMP)
	$(BIN)/ruff check src tests
	@log=$$(mktemp); ($(BIN)/mypy > "$$log" 2>&1; echo "mypy: exit $$?" >> "$$log") & \
	$(PYTEST) $(XDIST); tests=$$?; wait; cat "$$log"; \
	tail -n 1 "$$log" | grep -qx "mypy: exit 0"; types=$$?; rm -f "$$log"; \
	test $$types -eq 0 && test $$tests -eq 0

# Everything but the tests marked slow (refits, the launchers' venv, PostgreSQL, fuzzers, the
# browser, served subprocesses, tests over 0.4 s of CPU): about a minute on 2 cores. The
# marker expression must stay exactly "not slow": then the files SLOW names whole are not even
# imported (tests/conftest.py pytest_ignore_collect). The schemathesis and anyio pytest plugins
# are left out: only the slow fuzzers use schemathesis, no test is marked anyio, and importing
# them cost each of the three processes about 0.7 CPU-s (min of 5, shared machine, 2026-12-07).
FAST_PLUGINS_OFF := -p no:schemathesis -p no:anyio
test-fast: $(STAMP)
	WHICHGPU_LAUNCHERS_PYTHON= $(PYTEST) -m "not slow" $(FAST_PLUGINS_OFF) $(XDIST)

# Parameter counts of the decoder presets against the models transformers builds (needs torch
# and transformers in the environment; whichgpu does not depend on them).
check-counts: $(STAMP)
	$(BIN)/python scripts/check_counts_with_transformers.py

# Accuracy: each validation row's error and the median / p90 by category (see README).
validate: $(STAMP)
	$(BIN)/whichgpu validate memory
	$(BIN)/whichgpu validate speed
	$(BIN)/whichgpu validate fits
	$(BIN)/whichgpu validate serving
	$(BIN)/whichgpu validate questions

# The README's accuracy tables, regenerated from the validation (readme-accuracy-check: fail
# if they drifted, the leave-one-out tables included; the test suite checks the others).
readme-accuracy: $(STAMP)
	$(BIN)/python -m whichgpu.estimate.validation.tables --write

readme-accuracy-check: $(STAMP)
	$(BIN)/python -m whichgpu.estimate.validation.tables --check

# Refit the speed constants on the calibration rows, derive the range bands and evidence, and
# write them into src/whichgpu/estimate/data/speed_constants.toml (a test checks they match).
calibrate: $(STAMP)
	$(BIN)/python scripts/calibrate.py --write

# Refit the serving model's engine constants on the calibration sources of
# validation/serving.csv, derive its ranges (leave one source out), print calibration, LOSO and
# holdout errors, and write src/whichgpu/estimate/data/serving_constants.toml (a test checks it).
calibrate-serving: $(STAMP)
	$(BIN)/python scripts/calibrate_serving.py --write

# On a machine with an NVIDIA GPU: bench, bench model on three presets, validate; results under
# validation/calibration/<host>-<date>/ (scripts/gpu_check.sh --dry-run prints the plan).
gpu-check:
	bash scripts/gpu_check.sh

# Wheels for a GPU machine without network (Python 3.12 image that already has torch, typer,
# rich and huggingface_hub): whichgpu's other CLI dependencies, into .whl/ (git-ignored).
gpu-check-wheels: $(STAMP)
	$(BIN)/python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
	  --implementation cp --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
	  -d .whl pydantic pydantic-core annotated-types typing-inspection platformdirs gguf

# llm-analysis as a baseline on the same speed rows (installed here only, without its deps).
baseline: $(STAMP)
	$(BIN)/python -m pip install --quiet --no-deps llm-analysis==0.2.2 fire termcolor
	$(BIN)/python scripts/baseline_llm_analysis.py

# Load benchmark (not a test): 2,000 mixed requests, 50 at a time, to a server on loopback;
# first the same questions again and again, then every request a different question.
bench-web: $(STAMP)
	$(BIN)/python benchmarks/web_load.py --requests 2000 --concurrency 50
	$(BIN)/python benchmarks/web_load.py --requests 2000 --concurrency 50 --vary \
	  --out artifacts/bench-web-vary.json

# How long the answers take (not a test): in-process warm medians of the fixed question set
# (tests/answer_set.py) and CLI process CPU seconds (--help, memory, recommend).
bench-recommend: $(STAMP)
	$(BIN)/python benchmarks/recommend_time.py --runs 5

# Issue 27: every answer figure at once: bench-recommend, then the web's all-different load
# (50 concurrent, one worker) with the first advisor page after start.
bench-answers: $(STAMP)
	$(BIN)/python benchmarks/recommend_time.py --runs 5
	$(BIN)/python benchmarks/web_load.py --requests 2000 --concurrency 50 --vary \
	  --out artifacts/bench-answers-web.json

# Issue 27's figures, the README's source (not a test; a few minutes): in-process warm medians
# of the fixed question set (LLM tokens, serving at a rate, LoRA, pre-training, image, video;
# whole catalog, market prices) with their Python calls, CLI process CPU seconds, then the
# web: first advisor page after start, and p50/p99 of 2,000 all-different questions, 50
# concurrent, one worker; and where the web's CPU goes per request kind (engine, memos, JSON,
# pages, the rest of the web layer).
bench: $(STAMP)
	$(BIN)/python benchmarks/recommend_time.py --runs 5 --cli-runs 3 --calls
	$(BIN)/python benchmarks/web_load.py --requests 2000 --concurrency 50 --vary \
	  --out artifacts/bench-answers-web.json
	$(BIN)/python benchmarks/web_load.py --cpu 5 --out artifacts/bench-web-cpu.json

# Record the answers of the fixed question set again (tests/answer_set.py), after an answer
# changed on purpose; it prints what changed. tests/answers/test_answers_identical.py compares them.
answers-fixture: $(STAMP)
	$(BIN)/python tests/answer_set.py --write

# Issue 21: the all-different load run with heavy pasted configs mixed in (100,000 layers, and
# configs at the plausibility bounds), 2 a second; fails if the normal traffic's p99 > 1.5 s.
bench-web-heavy: $(STAMP)
	$(BIN)/python benchmarks/web_load.py --requests 2000 --concurrency 50 --vary \
	  --heavy-rate 2 --max-p99-ms 1500 --out artifacts/bench-web-heavy.json
# Priced commands (recommend, cost, tco, gpus, checklist) on 20k- and 200k-offer price stores
# of 10 price periods: median wall time and peak RSS of each (issue 21: < 0.5 s on 20k).
bench-store: $(STAMP)
	$(BIN)/python benchmarks/price_store.py --out artifacts/bench-store.json

# A server's RSS on a 20k-offer store over 10 price periods, steady traffic (issue 21: grows
# < 30 MB).
bench-rss: $(STAMP)
	$(BIN)/python benchmarks/server_rss.py --out artifacts/bench-rss.json

# Issue 20: the service under load with a refresh in the middle: 4 workers sharing a throwaway
# PostgreSQL, then one process on SQLite; mixed requests 50 at a time (at least 3,000, and until
# 10 s after the refresh), repeated questions then all different; p50/p99, errors, and that
# nothing was lost (exit 1 otherwise).
bench-service: $(STAMP)
	$(BIN)/python benchmarks/service_load.py --requests 3000 --concurrency 50
	$(BIN)/python benchmarks/service_load.py --requests 3000 --concurrency 50 --vary \
	  --out artifacts/bench-service-vary.json

# Extract the web app's messages and merge them into the .po catalogs (then translate).
i18n: $(STAMP)
	$(BIN)/python -m whichgpu.web.messages

# Browser tests, then the README's three screenshots from artifacts/screenshots/; then every
# page at phone width (390 x 844, English; the advisor and VRAM selector in French too) into
# docs/img/phone-*.png, failing if a page is wider than the phone or chart text < 11 px.
screenshots: $(STAMP)
	$(BIN)/python -m pytest tests/web/test_web_browser.py
	cp artifacts/screenshots/vram-selector.png artifacts/screenshots/advisor.png \
	   artifacts/screenshots/rent-or-buy.png docs/img/
	$(BIN)/python scripts/screenshots.py --check --lang en
	$(BIN)/python scripts/screenshots.py --check --lang fr --only advisor memory

clean:
	rm -rf $(VENV) $(LVENV) .pytest_cache .ruff_cache
