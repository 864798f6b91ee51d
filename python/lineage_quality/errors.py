"""The exceptions lineage-quality raises.

    LineageQualityError              base of everything raised on purpose
    +-- ContractError                a contract file cannot be read or makes no sense;
    |                                 names the file and the key or line at fault
    +-- ConfigError                  producer / sink configuration is wrong or incomplete
    |   +-- SparkStartError          the evaluator's Spark (its JVM, its master) did not start
    |   +-- HistoryUnreadable        the history store holds a row or table it cannot read;
    |                                 names the store, the row and the column
    +-- DatasetError                 an OpenLineage dataset cannot be turned into a DataFrame
    +-- QualityGateFailed            in-driver mode: a BLOCK rule failed (or could not run), or
                                      the evaluations did not end in time; lists each one

Rule evaluation never raises for a broken rule or dataset: that becomes an ERROR result.
"""

from __future__ import annotations


class LineageQualityError(Exception):
    """Base class of the errors this package raises on purpose."""


class ContractError(LineageQualityError):
    """A contract is unreadable or invalid. `where` names the key path or line."""

    def __init__(self, path: str, message: str, where: str | None = None) -> None:
        self.path = path
        self.where = where
        self.detail = message
        location = f"{path}: {where}" if where else path
        super().__init__(f"{location}: {message}")


class ConfigError(LineageQualityError):
    """The producer's configuration is wrong; the message says which key."""


class SparkStartError(ConfigError):
    """The evaluator's SparkSession could not be started: a bad master, setting or JVM; the
    message says which master (`args[0]`) and what Spark answered (`args[1]`)."""

    def __str__(self) -> str:
        return ": ".join(str(a) for a in self.args)


class HistoryUnreadable(ConfigError):
    """The history store cannot be read: a value of the wrong type, a NULL where one must be, a
    missing column or table; the message names the store (its file, or its masked URL)."""


class DatasetError(LineageQualityError):
    """An OpenLineage dataset cannot be located or read."""


class QualityGateFailed(LineageQualityError):
    """In-driver mode: the job must not count as a success. `failures` holds one line per BLOCK
    rule that did not pass (dataset, rule, expected and actual), or says what timed out."""

    def __init__(self, message: str, failures: list[str]) -> None:
        super().__init__(message)
        self.failures = failures
