# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON_VERSION := 3.12
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench clean venv

$(STAMP): pyproject.toml setup.py
	@command -v python$(PYTHON_VERSION) >/dev/null 2>&1 || { echo "jitcore needs python$(PYTHON_VERSION) on PATH (e.g. pyenv install 3.12)"; exit 1; }
	@test -x $(PY) || python$(PYTHON_VERSION) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,zoo]'
	@touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(PY) -m jitcore demo

# two workers fit the 2-core CI machine; loadgroup keeps each module that shares one expensive fixture on one worker
test: $(STAMP)
	$(PY) -m pytest tests -q -p no:cacheprovider -n 2 --dist loadgroup

bench: $(STAMP)
	$(PY) tools/bench_overhead.py

clean:
	rm -rf $(VENV) build *.egg-info
