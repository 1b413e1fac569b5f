# The two commands of the README: `make book` builds the site, `make test` runs every test.
# Both create the virtual environment from requirements.lock first (every package at the
# version tools/lock.sh pinned from requirements.txt; once, and again only when the lock,
# requirements.txt or pyproject.toml change).
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check
STAMP  := $(VENV)/.installed
SCALE  ?= book
# torch's CPU build (the lock's torch==X+cpu) is not on PyPI. It is installed first, from a
# wheel pip finds without any index (a wheel directory in pip's find-links) or else from
# PyTorch's CPU index; the lock then finds it satisfied.
TORCH_PIN   := $(shell grep -m1 '^torch==' requirements.lock)
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu

.PHONY: book test venv clean

venv: $(STAMP)

$(STAMP): requirements.lock requirements.txt pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) install -q --no-deps --no-index '$(TORCH_PIN)' 2>/dev/null \
		|| $(PIP) install -q --no-deps --index-url $(TORCH_INDEX) '$(TORCH_PIN)'
	$(PIP) install -q -r requirements.lock -e .
	touch $(STAMP)

# One torch thread per process: on a small shared machine more threads wait for each other.
# Then the whole book as one PDF, printed by the system's Chromium (tools/book_pdf.py; without
# Chromium it says so in one line and the site is built all the same).
book: $(STAMP)
	LENGTHGEN_SCALE=$(SCALE) OMP_NUM_THREADS=1 $(VENV)/bin/jupyter-book build . --keep-going -W -n
	$(PY) tools/book_pdf.py _build/html
	@echo "Site: $(CURDIR)/_build/html/index.html"

# Two pytest-xdist workers: one runs the chapters and then the tests of the site built from
# them (one group, conftest.py), the other every other test. TEST_WORKERS=1 runs them in one.
TEST_WORKERS ?= 2
test: $(STAMP)
	LENGTHGEN_SCALE=test OMP_NUM_THREADS=1 $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadgroup \
		--nbmake --nbmake-timeout=600 tests book

clean:
	rm -rf _build
