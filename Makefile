# lineage-quality: `make demo` and `make test` bootstrap everything they need on a fresh machine.
# SPARK=3.5 (the default) or SPARK=4 picks the Spark line: each has its own virtualenv, PySpark and
# jars side by side (README's support matrix), so both can be built and tested on one clone.
SHELL := /bin/bash
PYTHON ?= python3
SPARK ?= 3.5
ifeq ($(SPARK),3.5)
  VENV := .venv
  PYSPARK := pyspark==3.5.9
  SCALA := 2.12
  JARS := jvm-config/jars
  MVN_PROFILE :=
  JAVA_RELEASE := 11
else ifeq ($(SPARK),4)
  VENV := .venv-spark4
  PYSPARK := pyspark==4.1.4
  SCALA := 2.13
  JARS := jvm-config/jars-spark4
  MVN_PROFILE := -Pspark4
  JAVA_RELEASE := 17
else
  $(error SPARK must be 3.5 or 4, not '$(SPARK)')
endif
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
LISTENER_JAR := $(JARS)/openlineage-spark_$(SCALA)-1.53.0.jar
ENGINE_JAR := $(JARS)/lineage-quality-engine.jar
# One source tree for both lines, plus the files that spell what differs (src-line/spark-*).
ENGINE_SRC := $(wildcard jvm-config/src/lineagequality/*.java) \
  $(wildcard jvm-config/src-line/spark-$(SPARK)/lineagequality/*.java)
APT_STAMP := .stamp-system
VENV_STAMP := $(VENV)/.stamp-install

.PHONY: demo test test-spark lint typecheck unit e2e bench bench-appends bench-scaling bench-peers system venv jars test-jars kafka-jars clean

demo: system venv jars
	$(VENV)/bin/lineage-quality demo

# On SPARK=4 the same suite runs but for what has no Spark 4 build to compare with or run on
# (tests marked spark35_only: Deequ ships for Spark 3.5 only; the deployment tests' hadoop-aws and
# Hive jars are those of the 3.5 line).
test: system venv jars test-jars
	$(VENV)/bin/ruff check python tests
	$(VENV)/bin/mypy
	$(PY) -m pytest tests $(if $(filter 4,$(SPARK)),-m "not spark35_only")

# What CI runs on the second line: the suites that depend on Spark (engine, the real listener
# end to end, in-driver, Delta/Iceberg versions, Marquez, DataHub from real events, the CLI's
# checks). The install test is left to the first line: it builds the package, whatever the line.
test-spark: system venv jars
	$(PY) -m pytest tests/spark tests/e2e tests/cli tests/datahub/test_datahub_e2e.py \
	  tests/datahub/test_datahub_check.py tests/datahub/test_datahub_serve.py \
	  tests/unit/test_spark_line.py --ignore=tests/cli/test_install_keeps_pyspark.py \
	  -m "not spark35_only"

unit: venv
	$(PY) -m pytest tests/unit

e2e: system venv jars
	$(PY) -m pytest tests/e2e

lint: venv
	$(VENV)/bin/ruff check python tests

typecheck: venv
	$(VENV)/bin/mypy

# Debian packages: a JDK for Spark, Maven for the jars, PostgreSQL for the Marquez test fixture,
# Chromium and its driver for the quality view's browser test (tests/unit/test_view_browser.py).
system: $(APT_STAMP)
$(APT_STAMP):
	@missing=""; \
	command -v javac >/dev/null || missing="$$missing openjdk-17-jdk-headless"; \
	command -v mvn >/dev/null || missing="$$missing maven"; \
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing postgresql"; \
	$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || missing="$$missing python3-venv"; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	command -v chromedriver >/dev/null || missing="$$missing chromium-driver"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q $$missing; \
	fi
	@touch $@

venv: $(VENV_STAMP)
# The line's PySpark first: the package itself declares a range, so installing it keeps that one.
$(VENV_STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q '$(PYSPARK)'
	$(PIP) install -q -e '.[dev,datahub,postgres,kafka]'
	@touch $@

jars: $(LISTENER_JAR) $(ENGINE_JAR)
$(LISTENER_JAR): jvm-config/pom.xml
	mvn -q -B -f jvm-config/pom.xml $(MVN_PROFILE) dependency:copy-dependencies
	@test -f $@ && touch $@

# Test-only jars (s3proxy, hadoop-aws + AWS SDK for the deployment tests), never shipped.
TEST_JARS_STAMP := jvm-config/test-jars/.stamp
test-jars: $(TEST_JARS_STAMP) kafka-jars
$(TEST_JARS_STAMP): jvm-config/test-pom.xml
	mvn -q -B -f jvm-config/test-pom.xml dependency:copy-dependencies
	@touch $@

# The Apache Kafka broker of tests/kafka (KRaft, one node; its own folder: the broker's class path
# is every jar there), never shipped.
KAFKA_JARS_STAMP := jvm-config/kafka-jars/.stamp
kafka-jars: $(KAFKA_JARS_STAMP)
$(KAFKA_JARS_STAMP): jvm-config/kafka-pom.xml
	rm -rf jvm-config/kafka-jars
	mvn -q -B -f jvm-config/kafka-pom.xml dependency:copy-dependencies
	@touch $@

# The engine's JVM helpers, compiled from one source tree against the Spark jars of the line's
# PySpark; the manifest names the Spark and Scala versions, which the evaluator and attach() check.
ENGINE_BUILD := jvm-config/build/spark-$(SPARK)
$(ENGINE_JAR): $(ENGINE_SRC) $(VENV_STAMP)
	rm -rf $(ENGINE_BUILD) && mkdir -p $(ENGINE_BUILD)/classes $(JARS)
	javac --release $(JAVA_RELEASE) -nowarn -d $(ENGINE_BUILD)/classes \
	  -cp "$$($(PY) -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')/jars/*" \
	  $(ENGINE_SRC)
	printf 'Spark-Version: %s\nScala-Binary-Version: %s\n' \
	  "$$($(PY) -c 'import pyspark; print(pyspark.__version__)')" $(SCALA) > $(ENGINE_BUILD)/manifest
	jar cfm $@ $(ENGINE_BUILD)/manifest -C $(ENGINE_BUILD)/classes .

# Peers of the benchmark, each in a virtualenv of its own per Spark line (bench/peers/<line>/*.txt
# pins them: those that have a release for the line), and the Deequ jar PyDeequ needs (Spark 3.5),
# from Maven Central. Not part of `make test`. On SPARK=4 the results go to BENCHMARKS-spark4.md.
ifeq ($(SPARK),3.5)
  PEERS_DIR := bench/.peers
  BENCH_OUT := BENCHMARKS.md
  DEEQU_JAR := bench/.peers/jars/deequ-2.0.7-spark-3.5.jar
else
  PEERS_DIR := bench/.peers-spark$(SPARK)
  BENCH_OUT := BENCHMARKS-spark$(SPARK).md
  DEEQU_JAR :=
endif
PEER_NAMES := $(basename $(notdir $(wildcard bench/peers/$(SPARK)/*.txt)))
PEER_STAMPS := $(PEER_NAMES:%=$(PEERS_DIR)/%/.stamp-install)

$(PEERS_DIR)/%/.stamp-install: bench/peers/$(SPARK)/%.txt
	test -x $(PEERS_DIR)/$*/bin/python || $(PYTHON) -m venv $(PEERS_DIR)/$*
	$(PEERS_DIR)/$*/bin/pip install -q -r $<
	@touch $@

bench/.peers/jars/deequ-2.0.7-spark-3.5.jar:
	mvn -q -B dependency:copy -Dartifact=com.amazon.deequ:deequ:2.0.7-spark-3.5 \
	  -DoutputDirectory=bench/.peers/jars

bench-peers: $(PEER_STAMPS) $(DEEQU_JAR)

bench: system venv jars kafka-jars bench-peers
	$(PY) bench/run.py --out $(BENCH_OUT) $(BENCH_ARGS)
	$(PY) bench/scaling.py --out $(BENCH_OUT)
	$(PY) bench/append_cost.py --out bench/results/appends$(if $(filter 4,$(SPARK)),-spark4).md

# R10, R30 and RU at 1M, 10M and 100M rows beside floor (a), with the driver's peak memory (issue
# 52): the section "Scaling: 1M to 100M rows" of $(BENCH_OUT). The 100M rows (~2.7 GB) are
# generated once under bench/data/ and reused.
bench-scaling: system venv jars
	$(PY) bench/scaling.py --out $(BENCH_OUT)

# An append's cost as its table grows (issue 51): 1M rows appended to 0, 10M and 100M rows.
bench-appends: system venv jars
	$(PY) bench/append_cost.py --out bench/results/appends$(if $(filter 4,$(SPARK)),-spark4).md

clean:
	rm -rf $(VENV) $(JARS) jvm-config/build demo-output .lineage-quality $(APT_STAMP)
