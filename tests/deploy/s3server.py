"""A real S3 server (s3proxy from Maven Central, filesystem backend) and the jars Spark needs to
reach it through ``s3a://`` (hadoop-aws matching PySpark's Hadoop, and its AWS SDK bundle), all
fetched by ``jvm-config/test-pom.xml`` into ``jvm-config/test-jars/``.

Test support only: nothing here ships in the runtime package.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import secrets
import shutil
import subprocess
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.utils import formatdate
from functools import cache
from pathlib import Path

from .processes import REPO_ROOT, ServerProcess, ServerStartError, free_port, port_was_taken

TEST_POM = REPO_ROOT / "jvm-config" / "test-pom.xml"
TEST_JARS_DIR = REPO_ROOT / "jvm-config" / "test-jars"
MAVEN_TIMEOUT_S = 900.0  # the AWS SDK bundle alone is ~280 MB
START_TIMEOUT_S = 60.0
START_ATTEMPTS = 3
ACCESS_KEY = "lq-test-access"
# With no credentials provider named, s3a would also try environment variables and the EC2
# instance metadata endpoint (a slow timeout off EC2); the keys given are the only source.
CREDENTIALS_PROVIDER = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
_POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}


@dataclass(frozen=True)
class S3Jars:
    """The jars of ``jvm-config/test-pom.xml``, at the versions it pins."""

    s3proxy: Path
    hadoop_aws: Path
    aws_sdk_bundle: Path
    hadoop_version: str

    @property
    def s3a(self) -> list[Path]:
        """What a Spark driver and its executors need on their classpath for ``s3a://``."""
        return [self.hadoop_aws, self.aws_sdk_bundle]


def _pom_properties(pom: Path) -> dict[str, str]:
    props = ET.parse(pom).getroot().find("m:properties", _POM_NS)
    if props is None:
        return {}
    return {child.tag.split("}")[-1]: (child.text or "").strip() for child in props}


@cache
def resolve_s3_jars() -> S3Jars:
    """The test jars, fetched with Maven when one is missing (once per session).

    ``make test-jars`` normally did this already; this keeps ``pytest tests/deploy`` working on
    its own. Raises ``ServerStartError`` saying what Maven said when they cannot be had.
    """
    props = _pom_properties(TEST_POM)
    hadoop = props["hadoop.version"]
    jars = S3Jars(
        s3proxy=TEST_JARS_DIR / f"s3proxy-{props['s3proxy.version']}-jar-with-dependencies.jar",
        hadoop_aws=TEST_JARS_DIR / f"hadoop-aws-{hadoop}.jar",
        aws_sdk_bundle=TEST_JARS_DIR / f"aws-java-sdk-bundle-{props['aws-sdk.version']}.jar",
        hadoop_version=hadoop,
    )
    missing = [j for j in (jars.s3proxy, *jars.s3a) if not j.is_file()]
    if not missing:
        return jars
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ServerStartError(f"missing {missing[0].name} and `mvn` is not on PATH")
    cmd = [mvn, "-B", "-q", "-Dstyle.color=never", "-f", str(TEST_POM),
           "dependency:copy-dependencies"]  # fmt: skip
    try:
        result = subprocess.run(
            cmd, capture_output=True, text=True, timeout=MAVEN_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise ServerStartError(f"`{' '.join(cmd)}` timed out after {MAVEN_TIMEOUT_S:.0f}s") from exc
    still_missing = [j.name for j in (jars.s3proxy, *jars.s3a) if not j.is_file()]
    if result.returncode != 0 or still_missing:
        output = (result.stdout + result.stderr).strip()[-2000:]
        raise ServerStartError(
            f"`{' '.join(cmd)}` exited {result.returncode}, still missing {still_missing}:\n"
            f"{output}"
        )
    return jars


@dataclass
class S3Server:
    """A running s3proxy: ``endpoint`` takes path-style S3 requests signed with
    ``access_key``/``secret_key``; each bucket is a folder under ``data_dir``."""

    endpoint: str
    access_key: str
    secret_key: str
    data_dir: Path
    log_path: Path
    jars: S3Jars
    _process: ServerProcess = field(repr=False)

    def spark_conf(self, *, ship_jars: bool = True) -> dict[str, str]:
        """Settings for a SparkSession / spark-submit to read and write ``s3a://`` here.

        ``ship_jars=True`` lists hadoop-aws and the SDK in ``spark.jars``: the driver serves
        them and every executor copies them (the SDK is ~280 MB per executor folder).
        ``ship_jars=False`` puts them on the driver's and executors' class path instead, which
        works when executors run on this machine (local mode, the test standalone cluster).
        """
        conf = {
            "spark.hadoop.fs.s3a.endpoint": self.endpoint,
            "spark.hadoop.fs.s3a.path.style.access": "true",
            "spark.hadoop.fs.s3a.access.key": self.access_key,
            "spark.hadoop.fs.s3a.secret.key": self.secret_key,
            "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
            "spark.hadoop.fs.s3a.aws.credentials.provider": CREDENTIALS_PROVIDER,
        }
        if ship_jars:
            conf["spark.jars"] = ",".join(str(j) for j in self.jars.s3a)
        else:
            classpath = ":".join(str(j) for j in self.jars.s3a)
            conf["spark.driver.extraClassPath"] = classpath
            conf["spark.executor.extraClassPath"] = classpath
        return conf

    def request(self, method: str, path: str = "/") -> tuple[int, bytes]:
        """A path-style S3 request signed with AWS signature v2; returns (status, body)."""
        date = formatdate(usegmt=True)
        string_to_sign = f"{method}\n\n\n{date}\n{path}"
        digest = hmac.new(self.secret_key.encode(), string_to_sign.encode(), hashlib.sha1)
        signature = base64.b64encode(digest.digest()).decode()
        req = urllib.request.Request(
            self.endpoint + path,
            method=method,
            headers={"Date": date, "Authorization": f"AWS {self.access_key}:{signature}"},
        )
        try:
            with urllib.request.urlopen(req, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def list_buckets(self) -> list[str]:
        """ListBuckets through the S3 API."""
        status, body = self.request("GET", "/")
        if status != 200:
            raise RuntimeError(f"ListBuckets answered {status}: {body[:500]!r}")
        return [el.text or "" for el in ET.fromstring(body).iter() if el.tag.endswith("Name")]

    def create_bucket(self, name: str) -> str:
        """CreateBucket through the S3 API (s3a's mkdirs never creates buckets); returns name.

        With the filesystem backend this makes the folder ``data_dir / name``.
        """
        status, body = self.request("PUT", f"/{name}")
        if status != 200:
            raise RuntimeError(f"CreateBucket {name!r} answered {status}: {body[:500]!r}")
        return name

    def bucket_dir(self, name: str) -> Path:
        """Where the filesystem backend keeps bucket ``name``'s objects."""
        return self.data_dir / name

    def close(self) -> None:
        self._process.stop()

    def __enter__(self) -> S3Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _start_once(base: Path, jars: S3Jars) -> S3Server:
    java = shutil.which("java")
    if java is None:
        raise ServerStartError("`java` is not on PATH (s3proxy needs a JDK 17)")
    data_dir = base / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    secret = secrets.token_hex(16)
    settings = {
        "s3proxy.endpoint": endpoint,  # binds 127.0.0.1 only
        # v2 for our own tiny signer, v4 for the AWS SDK inside s3a.
        "s3proxy.authorization": "aws-v2-or-v4",
        "s3proxy.identity": ACCESS_KEY,
        "s3proxy.credential": secret,
        "jclouds.provider": "filesystem",
        "jclouds.filesystem.basedir": str(data_dir),
    }
    properties = base / "s3proxy.properties"
    properties.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
    process = ServerProcess.start(
        "s3proxy",
        [java, "-Xmx256m", "-jar", str(jars.s3proxy), "--properties", str(properties)],
        log_path=base / "s3proxy.log",
        cwd=base,
    )
    server = S3Server(
        endpoint=endpoint,
        access_key=ACCESS_KEY,
        secret_key=secret,
        data_dir=data_dir,
        log_path=process.log_path,
        jars=jars,
        _process=process,
    )

    def ready() -> bool:
        # A signed ListBuckets answered 200: up, and our credentials are the ones it checks.
        try:
            return server.request("GET", "/")[0] == 200
        except OSError:
            return False

    process.wait_until(ready, timeout=START_TIMEOUT_S, what=f"signed ListBuckets at {endpoint}")
    return server


@contextlib.contextmanager
def start_s3_server(base: Path) -> Iterator[S3Server]:
    """s3proxy on a free loopback port, buckets under ``base/data``; ready when a signed
    ListBuckets succeeds. Retried on a fresh port if its port was taken."""
    jars = resolve_s3_jars()
    for attempt in range(1, START_ATTEMPTS + 1):
        folder = base if attempt == 1 else base / f"retry-{attempt}"
        try:
            server = _start_once(folder, jars)
            break
        except ServerStartError:
            if attempt == START_ATTEMPTS or not port_was_taken(folder / "s3proxy.log"):
                raise
    with server:
        yield server
