"""A real Hive metastore (Thrift) server from the Hive 2.3.9 jars PySpark ships, on embedded
Derby in a temp folder, and a minimal Thrift client to ask it which databases it has.

Test support only: nothing here ships in the runtime package.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import socket
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape

from .processes import PYSPARK_HOME, ServerProcess, ServerStartError, free_port, port_was_taken

METASTORE_CLASS = "org.apache.hadoop.hive.metastore.HiveMetaStore"
START_TIMEOUT_S = 120.0  # the first start creates the Derby schema (DataNucleus autoCreateAll)
START_ATTEMPTS = 3

# Hive turns log4j2's async loggers on by default; they need the LMAX disruptor, which PySpark
# does not ship (NoClassDefFoundError: com/lmax/disruptor/EventTranslatorVararg at startup).
# The rest: Derby schema made on first use, no version check against a schema never initialised.
STATIC_SETTINGS = {
    "hive.async.log.enabled": "false",
    "datanucleus.schema.autoCreateAll": "true",
    "hive.metastore.schema.verification": "false",
}

# Found on the classpath (the conf dir comes first) by Hive's LogUtils: INFO to stdout, which is
# the server's log file, so a failed start shows why.
LOG4J2 = """\
status = error
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_OUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss.SSS} %p %c{1}: %m%n
rootLogger.level = info
rootLogger.appenderRef.console.ref = console
logger.datanucleus.name = DataNucleus
logger.datanucleus.level = warn
"""


@dataclass
class HiveMetastore:
    """A running metastore: ``uri`` is ``thrift://127.0.0.1:PORT``; tables of the ``default``
    database live under ``warehouse``."""

    uri: str
    port: int
    warehouse: Path
    base_dir: Path
    log_path: Path
    _process: ServerProcess = field(repr=False)

    @property
    def warehouse_uri(self) -> str:
        return self.warehouse.as_uri()

    def spark_conf(self) -> dict[str, str]:
        """Settings for a SparkSession / spark-submit to use this metastore as its catalog.

        ``spark.sql.warehouse.dir`` equals the server's ``hive.metastore.warehouse.dir``: the
        server places ``default``'s tables, Spark places new databases' folders, both here.
        """
        return {
            "spark.sql.catalogImplementation": "hive",
            "spark.hadoop.hive.metastore.uris": self.uri,
            "spark.sql.warehouse.dir": self.warehouse_uri,
            "spark.hadoop.hive.metastore.warehouse.dir": self.warehouse_uri,
        }

    def databases(self, timeout: float = 10.0) -> list[str]:
        """The metastore's ``get_all_databases`` over Thrift: proof that it serves requests."""
        return get_all_databases("127.0.0.1", self.port, timeout)

    def close(self) -> None:
        self._process.stop()

    def __enter__(self) -> HiveMetastore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _hive_site(settings: dict[str, str]) -> str:
    properties = "\n".join(
        f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>"
        for k, v in settings.items()
    )
    return f'<?xml version="1.0"?>\n<configuration>\n{properties}\n</configuration>\n'


def _start_once(base: Path) -> HiveMetastore:
    java = shutil.which("java")
    if java is None:
        raise ServerStartError("`java` is not on PATH (the metastore needs a JDK 17)")
    conf_dir, warehouse = base / "conf", base / "warehouse"
    for folder in (conf_dir, warehouse):
        folder.mkdir(parents=True, exist_ok=True)
    settings = {
        **STATIC_SETTINGS,
        "javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={base / 'metastore_db'};create=true"
        ),
        "hive.metastore.warehouse.dir": warehouse.as_uri(),
    }
    (conf_dir / "hive-site.xml").write_text(_hive_site(settings))
    (conf_dir / "hive-log4j2.properties").write_text(LOG4J2)
    port = free_port()
    process = ServerProcess.start(
        "Hive metastore",
        [java, "-Xmx512m", f"-Dderby.stream.error.file={base / 'derby.log'}",
         "-cp", f"{conf_dir}:{PYSPARK_HOME / 'jars'}/*", METASTORE_CLASS, "-p", str(port)],
        log_path=base / "metastore.log", cwd=base,
    )  # fmt: skip

    def ready() -> bool:
        try:
            return "default" in get_all_databases("127.0.0.1", port, timeout=5.0)
        except (OSError, ValueError):
            return False

    process.wait_until(ready, timeout=START_TIMEOUT_S, what=f"Thrift answer on port {port}")
    return HiveMetastore(
        uri=f"thrift://127.0.0.1:{port}",
        port=port,
        warehouse=warehouse,
        base_dir=base,
        log_path=process.log_path,
        _process=process,
    )


@contextlib.contextmanager
def start_hive_metastore(base: Path) -> Iterator[HiveMetastore]:
    """A metastore on a free port, Derby and warehouse under ``base``; ready once it answers
    ``get_all_databases`` with ``default``. Retried on a fresh port if its port was taken."""
    for attempt in range(1, START_ATTEMPTS + 1):
        folder = base if attempt == 1 else base / f"retry-{attempt}"
        try:
            metastore = _start_once(folder)
            break
        except ServerStartError:
            if attempt == START_ATTEMPTS or not port_was_taken(folder / "metastore.log"):
                raise
    with metastore:
        yield metastore


# ------------------------------------------------------------------ a minimal Thrift client
# TBinaryProtocol, unframed, no SASL: what the metastore speaks by default. Enough for one call
# with no arguments and a list<string> answer; a Python Thrift library would be one more
# dependency for this single readiness probe.

_VERSION_1 = 0x80010000
_CALL, _REPLY = 1, 2
_T_STOP, _T_STRING, _T_STRUCT, _T_LIST = 0, 11, 12, 15


def get_all_databases(host: str, port: int, timeout: float) -> list[str]:
    """Call ``ThriftHiveMetastore.get_all_databases()``; raise ValueError on an error answer."""
    name = b"get_all_databases"
    request = struct.pack(">Ii", _VERSION_1 | _CALL, len(name)) + name
    request += struct.pack(">i", 1) + bytes([_T_STOP])  # seqid 1, empty argument struct
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(request)
        reader = sock.makefile("rb")
        (header,) = struct.unpack(">I", _read(reader, 4))
        _read(reader, struct.unpack(">i", _read(reader, 4))[0])  # method name
        _read(reader, 4)  # seqid
        if header & 0xFF != _REPLY:
            raise ValueError(f"Thrift message type {header & 0xFF}, not a reply")
        field_type, field_id = struct.unpack(">bh", _read(reader, 3))
        if field_type == _T_LIST and field_id == 0:
            element_type, size = struct.unpack(">bi", _read(reader, 5))
            if element_type != _T_STRING:
                raise ValueError(f"list of Thrift type {element_type}, not strings")
            return [
                _read(reader, struct.unpack(">i", _read(reader, 4))[0]).decode()
                for _ in range(size)
            ]
        raise ValueError(f"no result list (field {field_id}, type {field_type}): an exception")


def _read(reader: io.BufferedIOBase, n: int) -> bytes:
    data = reader.read(n)
    if len(data) != n:
        raise ValueError(f"connection closed after {len(data)} of {n} bytes")
    return data
