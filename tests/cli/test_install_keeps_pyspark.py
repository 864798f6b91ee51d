"""Installing lineage-quality into an environment keeps that environment's PySpark.

A real `pip install` of the project (built from a copy of this checkout) into a fresh virtualenv
that already holds a PySpark other than the one `make` uses: 3.5.3 (older than the Makefile's
3.5.9), then 4.0.0 (another line, also with the `spark` extra), then 3.4.4 (a line we don't
support: still untouched, and the CLI then says why it won't run). The PySpark is a stand-in
distribution built here (named and versioned like the real one, a few bytes instead of 300 MB):
pip's resolver sees only names and versions, which is what the test is about.
"""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
MARKER = "stand-in installed by the test"


def _stand_in_pyspark(folder: Path, version: str) -> Path:
    """A wheel named pyspark-<version> whose module says which one it is."""
    dist = f"pyspark-{version}.dist-info"
    files = {
        "pyspark/__init__.py": f'__version__ = "{version}"\nMARKER = "{MARKER}"\n',
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: pyspark\nVersion: {version}\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{name},sha256={digest.decode()},{len(text.encode())}")
    files[f"{dist}/RECORD"] = "\n".join([*record, f"{dist}/RECORD,,"]) + "\n"
    wheel = folder / f"pyspark-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return wheel


def _project_copy(folder: Path) -> Path:
    """What a wheel is built from, copied so the build writes nothing into the checkout."""
    copy = folder / "lineage-quality"
    copy.mkdir()
    shutil.copy(REPO_ROOT / "pyproject.toml", copy)
    shutil.copy(REPO_ROOT / "README.md", copy)
    shutil.copytree(
        REPO_ROOT / "python",
        copy / "python",
        ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"),
    )
    return copy


def _run(*cmd: str | Path) -> str:
    done = subprocess.run(
        [str(c) for c in cmd], capture_output=True, text=True, timeout=900, check=False
    )
    assert done.returncode == 0, f"{cmd}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def _pyspark_in(python: Path) -> tuple[str, str]:
    out = _run(
        python,
        "-c",
        "import importlib.metadata as m, pyspark; "
        "print(m.version('pyspark')); print(getattr(pyspark, 'MARKER', 'real'))",
    )
    version, marker = out.strip().splitlines()
    return version, marker


@pytest.fixture(scope="module")
def environment(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    root = tmp_path_factory.mktemp("install")
    _run(sys.executable, "-m", "venv", root / "venv")
    return root / "venv" / "bin" / "python", _project_copy(root), root


@pytest.mark.parametrize(
    ("version", "extra"), [("3.5.3", ""), ("4.0.0", ""), ("4.0.0", "[spark]"), ("3.4.4", "")]
)
def test_pip_install_keeps_the_environments_pyspark(
    environment: tuple[Path, Path, Path], version: str, extra: str
) -> None:
    python, project, root = environment
    _run(python, "-m", "pip", "install", "-q", _stand_in_pyspark(root, version))
    assert _pyspark_in(python) == (version, MARKER)

    _run(python, "-m", "pip", "install", "-q", f"{project}{extra}")

    assert _pyspark_in(python) == (version, MARKER)
    listed = _run(python, "-m", "pip", "list", "--format", "freeze").splitlines()
    assert [line for line in listed if line.lower().startswith("pyspark==")] == [
        f"pyspark=={version}"
    ]


def test_an_unsupported_pyspark_is_refused_by_name(environment: tuple[Path, Path, Path]) -> None:
    python, project, root = environment
    _run(python, "-m", "pip", "install", "-q", _stand_in_pyspark(root, "3.4.4"))
    _run(python, "-m", "pip", "install", "-q", project)
    done = subprocess.run(
        [
            str(python),
            "-c",
            "from lineage_quality.evaluation.spark_line import running_line; running_line()",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    assert "Spark 3.4.4 is not supported: lineage-quality runs on Spark 3.5, Spark 4.x" in (
        done.stderr
    )


def test_without_pyspark_the_cli_says_what_to_install(
    tmp_path: Path, environment: tuple[Path, Path, Path]
) -> None:
    python, project, _ = environment
    _run(python, "-m", "pip", "uninstall", "-q", "-y", "pyspark")
    _run(python, "-m", "pip", "install", "-q", project)
    contract = REPO_ROOT / "examples" / "demo" / "contracts" / "orders_raw.yaml"
    cli = python.parent / "lineage-quality"
    done = subprocess.run(
        [str(cli), "check", "--contract", str(contract), "--dataset", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "lineage-quality: error: PySpark is not installed: lineage-quality runs on the "
        "environment's own PySpark (Spark 3.5 or 4.x); pip install 'lineage-quality[spark]' "
        "adds one"
    ]
