# The two commands of the README: `make book` builds the site, `make test` runs every test.
# Both create the virtual environment from requirements.txt first (once; again only when
# requirements.txt or pyproject.toml change).
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
SCALE  ?= book

.PHONY: book test venv clean

venv: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt
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
