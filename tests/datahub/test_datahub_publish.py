"""`lineage-quality datahub publish --contracts DIR`: the test contracts' assertions and data
contracts before any run, in a file DataHub's check accepts, at the URNs the run events of
`serve`/`check` use; a changed threshold published again marks the superseded assertion removed
(`--datahub-state`); `check` and `serve` parse the same options."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("datahub.emitter.mcp", reason="pip install 'lineage-quality[datahub]'")

from fake_gms import decode, fake_gms
from samples import check_metadata_file
from test_datahub_native import CONTRACTS, DATASET, _bindings

from lineage_quality.cli import build_parser, main
from lineage_quality.datahub.data_contract import contract_urn
from lineage_quality.datahub.urns import assertion_urn


def _publish(contracts: Path, out: Path, *extra: str) -> int:
    return main(
        [
            "datahub", "publish",
            "--contracts", str(contracts),
            "--datahub-file", str(out),
            "--shacl-assertions",
            *extra,
        ]
    )  # fmt: skip


def test_publish_sends_definitions_and_contracts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "mcps.json"
    assert _publish(CONTRACTS, out, "--datahub-instance", "ci") == 0
    assert "published" in capsys.readouterr().out
    check_metadata_file(out)
    records = json.loads(out.read_text())
    assert not [r for r in records if r["aspectName"] == "assertionRunEvent"]  # no run yet
    infos = {r["entityUrn"] for r in records if r["aspectName"] == "assertionInfo"}
    bindings = _bindings()
    assert infos == {assertion_urn(r, DATASET) for b in bindings for r in b.rules}
    contracts = {r["entityUrn"] for r in records if r["aspectName"] == "dataContractProperties"}
    assert contracts == {contract_urn(b.contract, b.object_name, DATASET) for b in bindings}
    instances = {r["aspect"]["json"].get("instance") for r in records
                 if r["aspectName"] == "dataPlatformInstance"}  # fmt: skip
    assert instances == {"urn:li:dataPlatformInstance:(urn:li:dataPlatform:lineage-quality,ci)"}


def test_a_changed_contract_published_again_supersedes(tmp_path: Path) -> None:
    contracts = tmp_path / "contracts"
    shutil.copytree(CONTRACTS, contracts)
    out, state = tmp_path / "mcps.json", tmp_path / "state.json"
    assert _publish(contracts, out, "--datahub-state", str(state)) == 0
    odcs = contracts / "orders.yaml"
    odcs.write_text(odcs.read_text().replace("mustBeBetween: [1, 1000]", "mustBeBetween: [1, 9]"))
    assert _publish(contracts, out, "--datahub-state", str(state)) == 0
    check_metadata_file(out)
    records = json.loads(out.read_text())
    removed = [r["entityUrn"] for r in records
               if r["aspectName"] == "status" and r["aspect"]["json"]["removed"]]  # fmt: skip
    before = next(r for b in _bindings() for r in b.rules if r.id == "rows")
    assert removed == [assertion_urn(before, DATASET)]


def test_a_rule_deleted_from_a_contract_is_removed(tmp_path: Path) -> None:
    contracts = tmp_path / "contracts"
    shutil.copytree(CONTRACTS, contracts)
    out, state = tmp_path / "mcps.json", tmp_path / "state.json"
    assert _publish(contracts, out, "--datahub-state", str(state)) == 0
    odcs = contracts / "orders.yaml"
    text = odcs.read_text()
    sql = "      - type: sql\n        query: SELECT COUNT(*) FROM ${object} WHERE amount < 0\n"
    sql += "        mustBe: 0\n        id: no_negative_amounts\n"
    assert sql in text
    odcs.write_text(text.replace(sql, ""))
    assert _publish(contracts, out, "--datahub-state", str(state)) == 0
    records = json.loads(out.read_text())
    removed = [r["entityUrn"] for r in records
               if r["aspectName"] == "status" and r["aspect"]["json"]["removed"]]  # fmt: skip
    deleted = next(r for b in _bindings() for r in b.rules if r.id == "no_negative_amounts")
    assert removed == [assertion_urn(deleted, DATASET)]
    last = [r for r in records if r["aspectName"] == "dataContractProperties"][-3:]
    listed = {a["assertion"] for r in last for a in r["aspect"]["json"].get("dataQuality", [])}
    assert assertion_urn(deleted, DATASET) not in listed  # the dataContract is current


def test_publish_needs_a_destination_and_patterns_are_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["datahub", "publish", "--contracts", str(CONTRACTS)]) == 2
    assert "needs --datahub-server" in capsys.readouterr().err
    glob = tmp_path / "glob.yaml"
    glob.write_text(
        (CONTRACTS / "orders.yaml").read_text().replace("/data/warehouse/every_kind", '"*/x"')
    )
    assert _publish(glob, tmp_path / "out.json") == 0
    assert "skipped every-kind-odcs/orders: bound by pattern only" in capsys.readouterr().err


def test_check_and_serve_take_the_same_datahub_options() -> None:
    commands = (["check", "--contract", "c.yaml", "--dataset", "d"], ["serve", "--contracts", "c"])
    for command in commands:
        args = build_parser().parse_args(
            [
                *command,
                "--datahub-server", "http://gms:8080",
                "--datahub-file", "out.json",
                "--datahub-instance", "eu",
                "--datahub-incidents", "BLOCK,ALERT",
                "--datahub-state", "state.json",
            ]
        )  # fmt: skip
        assert (args.datahub_gms, args.datahub_file, args.datahub_instance) == (
            "http://gms:8080",
            "out.json",
            "eu",
        )
        assert (args.datahub_incidents, args.datahub_state) == ("BLOCK,ALERT", "state.json")


def test_publish_to_a_gms(tmp_path: Path) -> None:
    with fake_gms() as gms:
        code = main(
            ["datahub", "publish", "--contracts", str(CONTRACTS), "--datahub-server", gms.url]
        )
        sent = [m for p in gms.posts() for m in decode(p)]
    assert code == 0
    names = {m.aspectName for m in sent}
    assert {"assertionInfo", "assertionActions", "dataContractProperties"} <= names
    with fake_gms(ingest_status=500) as broken:
        failed = main(
            ["datahub", "publish", "--contracts", str(CONTRACTS), "--datahub-server", broken.url]
        )
    assert failed == 1  # a destination that failed
