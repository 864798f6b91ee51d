"""Great Expectations 1.x: ephemeral context, Spark data source, a whole-DataFrame batch, one
ExpectationSuite with an expectation per rule (rule id in its `meta`), BOOLEAN_ONLY results."""

from __future__ import annotations

from typing import Any

_CONTEXT: Any = None


def conf() -> dict[str, str]:
    return {}


def version() -> str:
    from importlib.metadata import version as v

    return f"great_expectations {v('great_expectations')}"


def _batch_definition() -> Any:
    global _CONTEXT
    import great_expectations as gx

    if _CONTEXT is None:  # the context and data source are set up once per process
        context = gx.get_context(mode="ephemeral")
        asset = context.data_sources.add_spark("spark").add_dataframe_asset("orders")
        _CONTEXT = (context, asset.add_batch_definition_whole_dataframe("all"))
    return _CONTEXT


def expectation(r: dict[str, Any]) -> Any:
    import great_expectations.expectations as E

    kind, c, meta = r["kind"], r.get("column"), {"rule": r["id"]}
    if kind == "row_count":
        return E.ExpectTableRowCountToBeBetween(min_value=r["min"], meta=meta)
    if kind == "not_null":
        return E.ExpectColumnValuesToNotBeNull(column=c, meta=meta)
    if kind == "accepted":
        return E.ExpectColumnValuesToBeInSet(column=c, value_set=r["values"], meta=meta)
    if kind == "pattern":
        return E.ExpectColumnValuesToMatchRegex(column=c, regex=r["regex"], meta=meta)
    if kind == "range":
        return E.ExpectColumnValuesToBeBetween(
            column=c, min_value=r["min"], max_value=r["max"], meta=meta
        )
    if kind == "stat":
        cls = {
            "mean": E.ExpectColumnMeanToBeBetween, "min": E.ExpectColumnMinToBeBetween,
            "max": E.ExpectColumnMaxToBeBetween, "stddev": E.ExpectColumnStdevToBeBetween,
            "sum": E.ExpectColumnSumToBeBetween,
        }[r["stat"]]  # fmt: skip
        return cls(column=c, min_value=r["min"], max_value=r["max"], meta=meta)
    if len(r["columns"]) == 1:
        return E.ExpectColumnValuesToBeUnique(column=r["columns"][0], meta=meta)
    return E.ExpectCompoundColumnsToBeUnique(column_list=r["columns"], meta=meta)


def run(spark: Any, df: Any, rules: list[dict[str, Any]]) -> dict[str, bool | None]:
    import great_expectations as gx

    _, batch_definition = _batch_definition()
    suite = gx.ExpectationSuite(name="bench", expectations=[expectation(r) for r in rules])
    batch = batch_definition.get_batch(batch_parameters={"dataframe": df})
    result = batch.validate(suite, result_format="BOOLEAN_ONLY")
    verdicts: dict[str, bool | None] = {r["id"]: None for r in rules}
    for one in result.results:
        if one.exception_info and one.exception_info.get("raised_exception"):
            raise RuntimeError(str(one.exception_info)[:500])
        verdicts[one.expectation_config.meta["rule"]] = bool(one.success)
    return verdicts
