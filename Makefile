# make run  - set up a virtual environment from nothing, then run the main job
# make test - set up, then ruff and the whole test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint setup clean validate calibrate baseline

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(BIN)/whichgpu gpus --prices article-000 --precision article-000:fp16 --priced-only
	$(BIN)/whichgpu gpus --prices vramfarm-2026-11 --priced-only

lint: $(STAMP)
	$(BIN)/ruff check src tests

test: $(STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/python -m pytest

# Accuracy: each validation row's error and the median / p90 by category (see README).
validate: $(STAMP)
	$(BIN)/whichgpu validate memory
	$(BIN)/whichgpu validate speed

# Refit the speed constants on the calibration rows (prints; a person copies values).
calibrate: $(STAMP)
	$(BIN)/python scripts/calibrate.py

# llm-analysis as a baseline on the same speed rows (installed here only, without its deps).
baseline: $(STAMP)
	$(BIN)/python -m pip install --quiet --no-deps llm-analysis==0.2.2 fire termcolor
	$(BIN)/python scripts/baseline_llm_analysis.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
