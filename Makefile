# lineage-quality: `make demo` and `make test` bootstrap everything they need on a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
LISTENER_JAR := jvm-config/jars/openlineage-spark_2.12-1.53.0.jar
ENGINE_JAR := jvm-config/jars/lineage-quality-engine.jar
ENGINE_SRC := $(wildcard jvm-config/src/lineagequality/*.java)
APT_STAMP := .stamp-system
VENV_STAMP := $(VENV)/.stamp-install

.PHONY: demo test lint typecheck unit e2e bench bench-peers system venv jars test-jars clean

demo: system venv jars
	$(VENV)/bin/lineage-quality demo

test: system venv jars test-jars
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
	command -v javac >/dev/null || missing="$$missing openjdk-17-jdk-headless"; \
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
	$(PIP) install -q -e '.[dev,datahub,postgres]'
	@touch $@

jars: $(LISTENER_JAR) $(ENGINE_JAR)
$(LISTENER_JAR): jvm-config/pom.xml
	mvn -q -B -f jvm-config/pom.xml dependency:copy-dependencies
	@test -f $@ && touch $@

# Test-only jars (s3proxy, hadoop-aws + AWS SDK for the deployment tests), never shipped.
TEST_JARS_STAMP := jvm-config/test-jars/.stamp
test-jars: $(TEST_JARS_STAMP)
$(TEST_JARS_STAMP): jvm-config/test-pom.xml
	mvn -q -B -f jvm-config/test-pom.xml dependency:copy-dependencies
	@touch $@

# The engine's JVM helpers (the pattern DFA), compiled against the Spark jars pyspark ships.
$(ENGINE_JAR): $(ENGINE_SRC) $(VENV_STAMP)
	rm -rf jvm-config/build && mkdir -p jvm-config/build jvm-config/jars
	javac --release 11 -nowarn -d jvm-config/build \
	  -cp "$$($(PY) -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')/jars/*" \
	  $(ENGINE_SRC)
	jar cf $@ -C jvm-config/build .

# Peers of the benchmark, each in a virtualenv of its own (bench/peers/*.txt pins them), and
# the Deequ jar PyDeequ needs, from Maven Central. Not part of `make test`.
PEER_NAMES := pydeequ soda gx cuallee dqx
PEER_STAMPS := $(PEER_NAMES:%=bench/.peers/%/.stamp-install)
DEEQU_JAR := bench/.peers/jars/deequ-2.0.7-spark-3.5.jar

bench/.peers/%/.stamp-install: bench/peers/%.txt
	test -x bench/.peers/$*/bin/python || $(PYTHON) -m venv bench/.peers/$*
	bench/.peers/$*/bin/pip install -q -r $<
	@touch $@

$(DEEQU_JAR):
	mvn -q -B dependency:copy -Dartifact=com.amazon.deequ:deequ:2.0.7-spark-3.5 \
	  -DoutputDirectory=bench/.peers/jars

bench-peers: $(PEER_STAMPS) $(DEEQU_JAR)

bench: system venv jars bench-peers
	$(PY) bench/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) jvm-config/jars demo-output .lineage-quality $(APT_STAMP)
