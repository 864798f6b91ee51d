# lineage-quality: `make demo` and `make test` bootstrap everything they need on a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
LISTENER_JAR := jvm-config/jars/openlineage-spark_2.12-1.53.0.jar
APT_STAMP := .stamp-system
VENV_STAMP := $(VENV)/.stamp-install

.PHONY: demo test lint typecheck unit e2e bench system venv jars clean

demo: system venv jars
	$(VENV)/bin/lineage-quality demo

test: system venv jars
	$(VENV)/bin/ruff check python tests
	$(VENV)/bin/mypy
	$(PY) -m pytest tests

unit: venv
	$(PY) -m pytest tests/unit

e2e: system venv jars
	$(PY) -m pytest tests/e2e

lint: venv
	$(VENV)/bin/ruff check python tests

typecheck: venv
	$(VENV)/bin/mypy

# Debian packages: a JDK for Spark, Maven for the jars, PostgreSQL for the Marquez test fixture.
system: $(APT_STAMP)
$(APT_STAMP):
	@missing=""; \
	command -v java >/dev/null || missing="$$missing openjdk-17-jre-headless"; \
	command -v mvn >/dev/null || missing="$$missing maven"; \
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing postgresql"; \
	$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || missing="$$missing python3-venv"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q $$missing; \
	fi
	@touch $@

venv: $(VENV_STAMP)
$(VENV_STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[dev,datahub]'
	@touch $@

jars: $(LISTENER_JAR)
$(LISTENER_JAR): jvm-config/pom.xml
	mvn -q -B -f jvm-config/pom.xml dependency:copy-dependencies
	@test -f $@ && touch $@

bench: system venv jars
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) jvm-config/jars demo-output .lineage-quality $(APT_STAMP)
