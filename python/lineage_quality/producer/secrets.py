"""Keep secrets out of the logs.

Our own code never logs a header, a key or a transport's auth settings. As a second line, the
CLI masks every known secret value (the receiver's API key, the forwarding transport's API key
and custom header values, a Kafka transport's SASL/SSL settings, `*KEY*`/`*TOKEN*`/`*SECRET*`/
`*PASSWORD*` environment variables of OpenLineage and DataHub, libpq's PGPASSWORD) in every log
record, whoever logs it (openlineage-python, requests, psycopg...), and every password form of a
URL (masking.py). And once read, the secret environment variables are removed from the
environment -- also from the copy /proc shows (initial_environ.py) -- before the evaluator's
JVM, which runs contract SQL, starts (`scrub_environment`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping, MutableMapping
from typing import Any

from lineage_quality.masking import masked
from lineage_quality.producer.initial_environ import wipe_initial_environment

MASK = "***"
_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "AUTH", "CREDENTIAL")
_PREFIXES = ("OPENLINEAGE", "DATAHUB", "LINEAGE_QUALITY")
_MIN_LENGTH = 4  # shorter values would mask ordinary words
_LIBPQ = ("PGPASSWORD",)  # read by libpq when the history store connects (history/postgres.py)


class RedactingFilter(logging.Filter):
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self._secrets: set[str] = set()
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        self._secrets.update(s for s in secrets if s and len(s) >= _MIN_LENGTH)

    def scrub(self, text: str) -> str:
        return masked(text, self._secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        scrubbed = self.scrub(message)
        if scrubbed != message:
            record.msg, record.args = scrubbed, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = self.scrub(record.stack_info)
        return True


_installed: RedactingFilter | None = None


def redact_logs(secrets: Iterable[str]) -> RedactingFilter:
    """Mask `secrets` in every record that reaches the root logger's handlers (installed once;
    later calls add secrets)."""
    global _installed
    if _installed is None:
        _installed = RedactingFilter()
        for handler in logging.getLogger().handlers:
            handler.addFilter(_installed)
    _installed.add(secrets)
    return _installed


def environment_secrets(environ: Mapping[str, str]) -> list[str]:
    return [environ[name] for name in secret_names(environ)]


def transport_secrets(transport: Any) -> list[str]:
    """API keys and custom header values of an openlineage-python transport (and the transports
    of a composite one)."""
    found: list[str] = []
    config = getattr(transport, "config", None)
    auth = getattr(config, "auth", None)
    api_key = getattr(auth, "api_key", None)
    if isinstance(api_key, str):
        found.append(api_key)
    headers = getattr(config, "custom_headers", None)
    if isinstance(headers, Mapping):
        found.extend(v for v in headers.values() if isinstance(v, str))
    kafka = getattr(getattr(transport, "kafka_config", None), "config", None)  # librdkafka's
    if isinstance(kafka, Mapping):
        found.extend(client_secrets(kafka))
    for inner in getattr(transport, "transports", None) or []:
        found.extend(transport_secrets(inner))
    return found


# librdkafka settings that hold a secret: sasl.password, ssl.key.password,
# ssl.keystore.password, sasl.oauthbearer.client.secret, ssl.key.pem, sasl.oauthbearer.config...
_CLIENT_WORDS = ("password", "secret", "key.pem", "oauthbearer.config", "jaas", "token")


def client_secrets(settings: Mapping[str, Any]) -> list[str]:
    """The values of a Kafka client's settings (librdkafka's names) that are secrets."""
    return [
        value
        for name, value in settings.items()
        if isinstance(name, str)
        and any(w in name.lower() for w in _CLIENT_WORDS)
        and isinstance(value, str)
        and value
    ]


def secret_names(environ: Mapping[str, str]) -> list[str]:
    """Names of the environment variables `environment_secrets` treats as secrets: ours,
    OpenLineage's and DataHub's whose last word names a key, token, secret, password, auth or
    credential (`LINEAGE_QUALITY_API_KEY`, `DATAHUB_GMS_TOKEN`, not the engine's switches such
    as `LINEAGE_QUALITY_KEY_BYTES`), or holding a URL with a password
    (`OPENLINEAGE_URL=https://user:PASS@host`); libpq's PGPASSWORD."""
    return [
        name
        for name in environ
        if (
            name.upper().startswith(_PREFIXES)
            and (
                any(w in name.upper().rsplit("_", 1)[-1] for w in _WORDS)
                or masked(environ[name]) != environ[name]
            )
        )
        or name in _LIBPQ
    ]


def scrub_environment(environ: MutableMapping[str, str]) -> list[str]:
    """Remove the secrets from `environ` once they have been read, so that no process started
    afterwards -- the evaluator's JVM above all, which runs contract-supplied SQL -- inherits
    them; for `os.environ`, also from the copy of the environment this process started with,
    which `/proc/PID/environ` shows to every process of the same user (initial_environ.py).
    PGPASSWORD too: call it after the history store connected (libpq read it then; the
    connection is kept, never made again). Returns the names removed."""
    names = secret_names(environ)
    for name in names:
        environ.pop(name, None)
    if environ is os.environ:
        wipe_initial_environment(names)
    return names
