"""DataHub sink configuration, and the start-up check that the SDK is installed.

Imports nothing from `acryl-datahub`, and nothing else of this package (every other module reads
this one, never the other way round): the CLI reads it whether or not the extra is installed, and
a configured DataHub sink without the SDK fails at start-up (`require_sdk`, build.py).
"""

from __future__ import annotations

import importlib
import os

import attrs

from lineage_quality.errors import ConfigError
from lineage_quality.rules.actions import parse_action

TOKEN_ENV = "DATAHUB_GMS_TOKEN"
INSTALL_HINT = "pip install 'lineage-quality[datahub]'"


@attrs.frozen
class NamingConfig:
    """How OpenLineage datasets become DataHub dataset URNs.

    Mirror the settings of the DataHub OpenLineage endpoint the lineage goes to
    (`DATAHUB_OPENLINEAGE_COMMON_DATASET_ENV` or `DATAHUB_OPENLINEAGE_ENV`,
    `DATAHUB_OPENLINEAGE_COMMON_DATASET_PLATFORM_INSTANCE`, ...), or assertions attach to
    datasets the lineage never created.
    """

    env: str = "PROD"
    platform_instance: str | None = None
    hive_platform_alias: str = "hive"
    lower_case_urns: bool = False
    resolve_symlinks: bool = True


DEFAULT_NAMING = NamingConfig()


@attrs.frozen
class AssertionOptions:
    """What the assertions say besides the rules and their results.

    `instance`: the platform instance of this project's assertions (`dataPlatformInstance`), e.g.
    one per deployment. `incident_actions`: the rule actions whose failures raise a DataHub
    incident and whose passes resolve it (`assertionActions`); BLOCK by default, empty for none.
    `marquez_web_url`: the Marquez web UI; each result links to the dataset's page there
    (`externalUrl`). `state`: a JSON file remembering which assertion each rule was last sent as,
    so that one superseded by a changed rule is marked `status.removed` after a restart too
    (without it, within the process only).
    """

    instance: str | None = None
    incident_actions: frozenset[str] = frozenset({"BLOCK"})
    marquez_web_url: str | None = None
    state: str | None = None


DEFAULT_ASSERTIONS = AssertionOptions()
# The options of the DataHub outputs besides where they write (producer/outputs/datahub_*.py).
ASSERTION_OPTIONS = (
    "env",
    "platform_instance",
    "instance",
    "incidents",
    "marquez_web_url",
    "state",
)


def incident_actions(value: object) -> frozenset[str]:
    """`"BLOCK,ALERT"`, a list of action names, or `"none"` -> the action names (ConfigError for
    one that is no action)."""
    if value is None:
        return DEFAULT_ASSERTIONS.incident_actions
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple | frozenset | set):
        raise ConfigError(f"incident actions must be a list of actions, not {value!r}")
    names = [str(i).strip() for i in items if str(i).strip()]
    if [n.lower() for n in names] == ["none"]:
        return frozenset()
    try:
        return frozenset(parse_action(n).value for n in names)
    except ValueError as exc:
        raise ConfigError(f"incident actions: {exc}") from exc


@attrs.frozen
class DataHubConfig:
    """Where assertion MCPs go: a GMS (`gms_url`), an MCP file (`file`), or both.

    `openapi`: None lets the SDK pick (OpenAPI on servers that support it, else Rest.li).
    `queue_size`: batches (one per evaluated event) waiting for the background emitter; when it
    is full new batches are dropped with a warning, never blocking the lineage events.
    `retry_max_times`: the SDK's retries of one request; `cooldown_seconds`: after a GMS failure,
    how long batches are dropped at once instead of each waiting for the absent server.
    """

    gms_url: str | None = None
    token: str | None = None
    file: str | None = None
    naming: NamingConfig = DEFAULT_NAMING
    assertions: AssertionOptions = DEFAULT_ASSERTIONS
    openapi: bool | None = None
    timeout_seconds: float = 30.0
    retry_max_times: int = 3
    cooldown_seconds: float = 30.0
    queue_size: int = 1000

    @property
    def enabled(self) -> bool:
        return bool(self.gms_url or self.file)

    @classmethod
    def from_options(
        cls,
        gms_url: str | None = None,
        file: str | None = None,
        env: str | None = None,
        platform_instance: str | None = None,
        token: str | None = None,
        instance: str | None = None,
        incidents: object = None,
        marquez_web_url: str | None = None,
        state: str | None = None,
    ) -> DataHubConfig:
        """The CLI's options; the token falls back to `DATAHUB_GMS_TOKEN`."""
        naming = NamingConfig(
            env=(env or "PROD").upper(), platform_instance=platform_instance or None
        )
        assertions = AssertionOptions(
            instance=instance or None,
            incident_actions=incident_actions(incidents),
            marquez_web_url=marquez_web_url or None,
            state=state or None,
        )
        return cls(
            gms_url=gms_url or None,
            token=token or os.environ.get(TOKEN_ENV) or None,
            file=file or None,
            naming=naming,
            assertions=assertions,
        )


def require_sdk() -> None:
    """Raise ConfigError, saying what to install, when `acryl-datahub` is missing."""
    try:
        importlib.import_module("datahub.emitter.mcp")
    except ImportError as exc:
        raise ConfigError(
            f"a DataHub sink needs the acryl-datahub package ({exc}); install it with: "
            f"{INSTALL_HINT}"
        ) from exc
