# The lineage-quality sidecar (`lineage-quality serve`) used by docker-compose.yml.
# Bookworm pinned on purpose: it is the Debian release that still ships openjdk-17, which
# PySpark 3.5 needs for the SparkSession that evaluates the rules.
FROM python:3.11-slim-bookworm

RUN apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless procps \
 && rm -rf /var/lib/apt/lists/* \
 && ln -s "$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")" /opt/java
ENV JAVA_HOME=/opt/java \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1

WORKDIR /src
# Only what the package build needs (keeps .venv, jars and test data out of the image).
COPY pyproject.toml README.md ./
COPY python ./python
# EXTRAS="[datahub]" adds the DataHub sinks (docker-compose.yml, profile datahub).
ARG EXTRAS=""
RUN pip install ".${EXTRAS}" && rm -rf /src

RUN useradd --create-home --uid 1000 lineage
USER lineage
WORKDIR /home/lineage

EXPOSE 5055
# Listening on 0.0.0.0, serve requires LINEAGE_QUALITY_API_KEY (docker run -e ...) or, explicitly,
# --allow-no-auth.
CMD ["lineage-quality", "serve", "--host", "0.0.0.0", "--port", "5055", "--contracts", "/contracts"]
