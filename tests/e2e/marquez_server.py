"""A real Marquez API server (and the PostgreSQL it needs) for the end-to-end tests.

Test support only: nothing here ships in the runtime package.

Two ways to get one:

* Local processes (the default, no Docker needed): PostgreSQL from the Debian server binaries,
  plus the ``marquez-api`` jar fetched by Maven from ``jvm-config/marquez/pom.xml`` -- or, where
  the Maven mirror lacks it, ``../shared/marquez/marquez-api-<version>.jar`` beside the checkout
  (or beside the local checkout it was cloned from), checked against its SHA256SUMS -- run with
  ``java -jar ... server jvm-config/marquez/marquez.yml``.
* ``docker-compose.yml`` through testcontainers, when a Docker engine answers and
  testcontainers is installed.

Ports are picked at run time so parallel sessions and a developer's own Marquez never collide.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

MARQUEZ_VERSION = "0.50.0"
MARQUEZ_ARTIFACT = f"io.github.marquezproject:marquez-api:{MARQUEZ_VERSION}"
MARQUEZ_MAIN_CLASS = "marquez.MarquezApp"

PG_USER = "marquez"
PG_PASSWORD = "marquez"
PG_DATABASE = "marquez"
PG_SUPERUSER = "postgres"

MAVEN_TIMEOUT_S = 600.0
MARQUEZ_CONFIG = Path(__file__).resolve().parents[2] / "jvm-config" / "marquez" / "marquez.yml"
MARQUEZ_START_TIMEOUT_S = 120.0
PG_START_TIMEOUT_S = 60


class ServerStartError(RuntimeError):
    """A server process did not come up; the message carries the tail of its log."""


def free_port() -> int:
    """Ask the kernel for an unused 127.0.0.1 port (closed again before the server binds it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


# --------------------------------------------------------------------------------- PostgreSQL


def find_postgres_bin() -> Path:
    """Return the newest ``/usr/lib/postgresql/<major>/bin`` (Debian's layout: not on PATH)."""
    candidates = [p for p in Path("/usr/lib/postgresql").glob("*/bin") if (p / "initdb").exists()]
    if not candidates:
        raise FileNotFoundError(
            "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin; "
            "run `make system` (it apt-get installs `postgresql`)."
        )
    return max(candidates, key=lambda p: int(re.sub(r"\D", "", p.parent.name) or 0))


def _postgres_os_user() -> str | None:
    """The account PostgreSQL runs under: ``postgres`` when we are root, else ourselves.

    initdb and postgres refuse to run as root, which is what CI runs as.
    """
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(PG_SUPERUSER)
    except KeyError:
        subprocess.run(
            [
                "useradd",
                "--system",
                "--user-group",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                PG_SUPERUSER,
            ],
            check=True,
        )
    return PG_SUPERUSER


@dataclass
class PostgresHandle:
    """A running throwaway PostgreSQL cluster with a ``marquez`` role and database."""

    bin_dir: Path
    base_dir: Path
    port: int
    run_as: str | None
    log_copy: Path
    host: str = "127.0.0.1"
    user: str = PG_USER
    password: str = PG_PASSWORD
    database: str = PG_DATABASE
    _closed: bool = field(default=False, repr=False)

    @property
    def data_dir(self) -> Path:
        return self.base_dir / "data"

    @property
    def socket_dir(self) -> Path:
        return self.base_dir / "sock"

    @property
    def log_path(self) -> Path:
        return self.base_dir / "postgres.log"

    @property
    def jdbc_url(self) -> str:
        return f"jdbc:postgresql://{self.host}:{self.port}/{self.database}"

    def psql(self, sql: str, *, superuser: bool = False) -> str:
        """Run ``sql`` with psql; as ``marquez`` over TCP with its password, or as superuser
        over the private socket. Returns the unaligned, tuples-only output."""
        if superuser:
            target = ["-h", str(self.socket_dir), "-U", PG_SUPERUSER, "-d", "postgres"]
        else:
            target = ["-h", self.host, "-U", self.user, "-d", self.database]
        result = subprocess.run(
            [
                str(self.bin_dir / "psql"),
                *target,
                "-p",
                str(self.port),
                "-v",
                "ON_ERROR_STOP=1",
                "-X",
                "-A",
                "-t",
                "-c",
                sql,
            ],
            env={**os.environ, "PGPASSWORD": self.password, "PGCONNECT_TIMEOUT": "10"},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"psql failed ({result.returncode}): {result.stderr.strip()}")
        return result.stdout.strip()

    def close(self) -> None:
        """Stop the server (fast shutdown), keep its log in the workdir, drop the cluster."""
        if self._closed:
            return
        self._closed = True
        try:
            _run_pg(self, ["pg_ctl", "-D", str(self.data_dir), "-m", "fast", "-w", "stop"])
        finally:
            with contextlib.suppress(OSError):
                shutil.copyfile(self.log_path, self.log_copy)
            shutil.rmtree(self.base_dir, ignore_errors=True)

    def __enter__(self) -> PostgresHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _run_pg(pg: PostgresHandle, argv: list[str]) -> None:
    """Run a PostgreSQL server tool as the cluster's OS user; raise with its output on failure."""
    cmd = [str(pg.bin_dir / argv[0]), *argv[1:]]
    if pg.run_as is not None:
        cmd = ["runuser", "-u", pg.run_as, "--", *cmd]
    result = subprocess.run(
        cmd,
        cwd=pg.base_dir,  # the postgres user may not be allowed into our cwd
        capture_output=True,
        text=True,
        timeout=PG_START_TIMEOUT_S + 30,
        check=False,
    )
    if result.returncode != 0:
        raise ServerStartError(
            f"{argv[0]} failed ({result.returncode}):\n{result.stdout}{result.stderr}\n"
            f"server log:\n{_tail(pg.log_path)}"
        )


def start_postgres(workdir: Path) -> PostgresHandle:
    """Create and start a cluster on a free 127.0.0.1 port, with role+database ``marquez``.

    The cluster lives in a short private dir under the system temp dir, not in ``workdir``:
    pytest's temp dirs are mode 0700 root (the ``postgres`` user cannot enter them) and a Unix
    socket path must stay under ~107 bytes. Its log is copied into ``workdir`` on close.
    """
    bin_dir = find_postgres_bin()
    run_as = _postgres_os_user()
    workdir.mkdir(parents=True, exist_ok=True)
    base_dir = Path(tempfile.mkdtemp(prefix="lq-pg-"))
    (base_dir / "sock").mkdir()
    if run_as is not None:
        account = pwd.getpwnam(run_as)
        for path in (base_dir, base_dir / "sock"):
            os.chown(path, account.pw_uid, account.pw_gid)

    pg = PostgresHandle(
        bin_dir=bin_dir,
        base_dir=base_dir,
        port=free_port(),
        run_as=run_as,
        log_copy=workdir / "postgres.log",
    )
    try:
        # Local socket: trust (the socket dir is private). TCP: a real password, as Marquez uses.
        _run_pg(
            pg,
            [
                "initdb",
                "-D",
                str(pg.data_dir),
                "-U",
                PG_SUPERUSER,
                "-E",
                "UTF8",
                "--locale=C",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
            ],
        )
        server_opts = " ".join(
            [
                "-c listen_addresses=127.0.0.1",
                f"-p {pg.port}",
                f"-c unix_socket_directories={pg.socket_dir}",
                # Throwaway data: durability only slows the tests down.
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off",
            ]
        )
        _run_pg(
            pg,
            [
                "pg_ctl",
                "-D",
                str(pg.data_dir),
                "-l",
                str(pg.log_path),
                "-o",
                server_opts,
                "-w",
                "-t",
                str(PG_START_TIMEOUT_S),
                "start",
            ],
        )
    except BaseException:
        if (pg.data_dir / "postmaster.pid").exists():  # started, but never reported ready
            with contextlib.suppress(Exception):
                _run_pg(pg, ["pg_ctl", "-D", str(pg.data_dir), "-m", "immediate", "stop"])
        shutil.rmtree(base_dir, ignore_errors=True)
        raise
    try:
        pg.psql(f"CREATE ROLE {PG_USER} LOGIN PASSWORD '{PG_PASSWORD}'", superuser=True)
        # Owner, not just GRANT: since PostgreSQL 15 only the owner may create in `public`.
        pg.psql(f"CREATE DATABASE {PG_DATABASE} OWNER {PG_USER}", superuser=True)
    except BaseException:
        pg.close()
        raise
    return pg


# --------------------------------------------------------------------------- the Marquez jar


class JarResolution(NamedTuple):
    """Where the Marquez jar is, or why there is none."""

    jar: Path | None
    reason: str


def _check_runnable(jar: Path) -> str | None:
    """Return why ``jar`` cannot be run with ``java -jar`` (None if it can).

    The published artifact is expected to be the shaded jar; a thin one would only fail
    later, deep inside the JVM, with a ClassNotFoundException.
    """
    try:
        with zipfile.ZipFile(jar) as zf:
            manifest = zf.read("META-INF/MANIFEST.MF").decode("utf-8", "replace")
            shaded = any(name.startswith("io/dropwizard/") for name in zf.namelist())
    except (OSError, KeyError, zipfile.BadZipFile) as exc:
        return f"{jar.name} is not a readable jar: {exc}"
    if f"Main-Class: {MARQUEZ_MAIN_CLASS}" not in manifest:
        return f"{jar.name} has no 'Main-Class: {MARQUEZ_MAIN_CLASS}' in its manifest"
    if not shaded:
        return f"{jar.name} is not the shaded jar (no Dropwizard classes inside)"
    return None


def _maven_failure(output: str) -> str:
    """The part of Maven's output that says what went wrong.

    Maven nests causes as ``outer: inner: innermost`` on its first ``[ERROR]`` line; the
    innermost one names the missing artifact and the repository asked. Debian's Maven colours
    its output even in batch mode, so escape codes are stripped first.
    """
    text = re.sub(r"\x1b\[[0-9;]*m", "", output)
    errors = [
        message
        for line in text.splitlines()
        if line.startswith("[ERROR]") and (message := line.removeprefix("[ERROR]").strip())
    ]
    if not errors:
        return text.strip()[-500:] or "Maven failed without output"
    first = errors[0].removesuffix(" -> [Help 1]")
    cause = re.search(
        r"(Could not find artifact|Failure to find|Could not transfer artifact|"
        r"Non-resolvable|Could not resolve).*",
        first,
    )
    found = cause.group(0) if cause else first
    return re.sub(r"^Could not resolve dependencies for project [^:]+(:[^:]+)*?: ", "", found)


def _shared_folders(repo_root: Path) -> list[Path]:
    """``../shared/marquez`` beside the checkout; for a clone of a local checkout (made in a
    temporary folder, say), beside the checkout it was cloned from too."""
    folders = [repo_root.parent / "shared" / "marquez"]
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        origin = subprocess.run(
            ["git", "-C", str(repo_root), "remote", "get-url", "origin"],
            capture_output=True, text=True, timeout=10, check=False,
        ).stdout.strip()  # fmt: skip
        if origin and Path(origin).is_dir():
            folders.append(Path(origin).resolve().parent / "shared" / "marquez")
    return folders


def shared_marquez_jar(repo_root: Path) -> tuple[Path | None, str]:
    """``../shared/marquez/marquez-api-<version>.jar`` (a runnable build of Marquez for machines
    whose Maven mirror lacks the artifact), checked against its SHA256SUMS."""
    folders = _shared_folders(repo_root)
    folder = next((f for f in folders if f.is_dir()), folders[0])
    jar = folder / f"marquez-api-{MARQUEZ_VERSION}.jar"
    sums = folder / "SHA256SUMS"
    if not jar.is_file():
        return None, f"{jar} does not exist"
    if not sums.is_file():
        return None, f"{sums} does not exist (the jar is not used unchecked)"
    expected = next(
        (
            line.split()[0]
            for line in sums.read_text().splitlines()
            if line.split()[1:] and line.split()[-1].lstrip("*") == jar.name
        ),
        None,
    )
    if expected is None:
        return None, f"{sums} has no line for {jar.name}"
    digest = hashlib.sha256()
    with jar.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != expected.lower():
        return None, f"{jar} does not match its SHA256SUMS"
    return jar, ""


@cache
def resolve_marquez_jar(repo_root: Path) -> JarResolution:
    """Fetch the Marquez jar with ``jvm-config/marquez/pom.xml`` (once per session).

    Maven is only run when the jar is not there yet. ``-U`` makes Maven ask the remote again
    instead of trusting a cached "not found" from an earlier run.
    """
    pom = repo_root / "jvm-config" / "marquez" / "pom.xml"
    jar = pom.parent / "jars" / f"marquez-api-{MARQUEZ_VERSION}.jar"
    if not jar.exists():
        mvn = shutil.which("mvn")
        if mvn is None:
            return JarResolution(None, "`mvn` is not on PATH")
        cmd = [
            mvn,
            "-B",
            "-q",
            "-U",
            "-Dstyle.color=never",
            "-f",
            str(pom),
            "dependency:copy-dependencies",
        ]
        try:
            result = subprocess.run(
                cmd, capture_output=True, text=True, timeout=MAVEN_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired:
            command = " ".join(cmd[1:])
            return JarResolution(None, f"`mvn {command}` timed out after {MAVEN_TIMEOUT_S:.0f}s")
        if result.returncode != 0 or not jar.exists():
            maven = _maven_failure(result.stdout + result.stderr)
            shared, why_not = shared_marquez_jar(repo_root)
            if shared is None:
                return JarResolution(None, f"{maven}; and no fallback: {why_not}")
            jar = shared
    problem = _check_runnable(jar)
    if problem is not None:
        return JarResolution(None, f"resolved, but {problem}")
    return JarResolution(jar, "")


# ------------------------------------------------------------------------------ Marquez server


@dataclass
class MarquezHandle:
    """A running Marquez API: ``url`` is the REST API root (``/api/v1/...`` lives under it)."""

    url: str
    admin_url: str
    log_path: Path | None
    _stop: Callable[[], None] = field(repr=False)
    _closed: bool = field(default=False, repr=False)

    @property
    def lineage_url(self) -> str:
        """Where OpenLineage events go (what the HTTP transport's ``url`` + endpoint means)."""
        return f"{self.url}/api/v1/lineage"

    def get_json(self, path: str, timeout: float = 30.0) -> Any:
        """GET ``url + path`` and decode the JSON body."""
        with urllib.request.urlopen(f"{self.url}{path}", timeout=timeout) as response:
            return json.load(response)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._stop()

    def __enter__(self) -> MarquezHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _healthy(admin_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{admin_url}/healthcheck", timeout=5) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def start_marquez(
    jar: Path, pg: PostgresHandle, workdir: Path, config: Path | None = None
) -> MarquezHandle:
    """Run the Marquez jar against ``pg`` and wait until its admin healthcheck passes.

    ``config`` defaults to ``jvm-config/marquez/marquez.yml``.
    The first start runs all of Marquez's Flyway migrations, hence the generous timeout.
    """
    java = shutil.which("java")
    if java is None:
        raise FileNotFoundError("`java` is not on PATH (Marquez needs a JDK/JRE 17)")
    jar = jar.resolve()  # the JVM runs in workdir
    config = (config or MARQUEZ_CONFIG).resolve()
    port, admin_port = free_port(), free_port()
    env = {
        **os.environ,
        "MARQUEZ_BIND_HOST": "127.0.0.1",
        "MARQUEZ_PORT": str(port),
        "MARQUEZ_ADMIN_PORT": str(admin_port),
        "POSTGRES_HOST": pg.host,
        "POSTGRES_PORT": str(pg.port),
        "POSTGRES_DB": pg.database,
        "POSTGRES_USER": pg.user,
        "POSTGRES_PASSWORD": pg.password,
    }
    workdir.mkdir(parents=True, exist_ok=True)
    log_path = workdir / "marquez.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [
                java,
                "-Duser.timezone=UTC",
                "-Dlog4j2.formatMsgNoLookups=true",
                "-jar",
                str(jar),
                "server",
                str(config),
            ],
            cwd=workdir,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )

    def stop() -> None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    admin_url = f"http://127.0.0.1:{admin_port}"
    deadline = time.monotonic() + MARQUEZ_START_TIMEOUT_S
    while not _healthy(admin_url):
        if process.poll() is not None:
            raise ServerStartError(
                f"Marquez exited with {process.returncode} before it was healthy; "
                f"log {log_path}:\n{_tail(log_path)}"
            )
        if time.monotonic() > deadline:
            stop()
            raise ServerStartError(
                f"Marquez not healthy after {MARQUEZ_START_TIMEOUT_S:.0f}s; "
                f"log {log_path}:\n{_tail(log_path)}"
            )
        time.sleep(1.0)
    return MarquezHandle(
        url=f"http://127.0.0.1:{port}", admin_url=admin_url, log_path=log_path, _stop=stop
    )


# ------------------------------------------------------------------------- docker compose path


def docker_compose_usable() -> bool:
    """True when a Docker engine answers and testcontainers is importable."""
    try:
        import testcontainers.compose  # noqa: F401
    except ImportError:
        return False
    if shutil.which("docker") is None:
        return False
    try:
        probe = subprocess.run(["docker", "info"], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


@contextlib.contextmanager
def compose_marquez(repo_root: Path) -> Iterator[MarquezHandle]:
    """Marquez and its database from ``docker-compose.yml`` (services ``db`` and ``api``)."""
    from testcontainers.compose import DockerCompose

    compose = DockerCompose(
        repo_root, compose_file_name="docker-compose.yml", services=["db", "api"], wait=True
    )
    compose.start()
    try:

        def address(port: int) -> str:
            host = compose.get_service_host("api", port)
            return f"http://{host}:{compose.get_service_port('api', port)}"

        api, admin = address(5000), address(5001)
        deadline = time.monotonic() + MARQUEZ_START_TIMEOUT_S
        while not _healthy(admin):
            if time.monotonic() > deadline:
                raise ServerStartError(f"Marquez (compose) not healthy at {admin}/healthcheck")
            time.sleep(1.0)
        yield MarquezHandle(url=api, admin_url=admin, log_path=None, _stop=lambda: None)
    finally:
        compose.stop()
