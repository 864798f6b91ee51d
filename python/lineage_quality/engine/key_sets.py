"""Every uniqueness key set of a dataset counted at the cost of about one shuffle of hashes.

engine/uniqueness.py counts one key set per pass: a scan and a shuffle of one 64-bit hash per
row, for each key set. Here one select over the dataset emits, per row and per key set whose
parts are all non-null, one long: the key set's slot in the top `SLOT_BITS` bits, its key's hash
in the rest. One shuffle (of arrays of longs, in the JVM helper `KeyHashes.summarizePacked`)
moves them all to partitions that count rows and distinct hashes per slot and list the hashes
seen more than once. Those are checked exactly, for all key sets in one more scan, by grouping
just the rows that carry them by their real key (only the columns of their own key set), as the
single-set path does: a collision costs time, never a wrong count.

A single integer key needs no check when its value fits the hash bits: the value itself is the
hash, one-to-one. Those values travel mostly as bitmaps of their blocks (JVM helper
`KeyBitmaps`). A `bigint` beyond them goes to a second slot of the same key set, hashed and
checked. Key sets that cannot be hashed, small datasets, a slot with too many repeated hashes
(the plain path, per key set) and a failed packed pass (each key set on its own, so a failure
stays with its key set) all take engine/uniqueness.py's paths.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

import attrs
from py4j.protocol import Py4JError, Py4JJavaError
from pyspark import InheritableThread
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from lineage_quality.engine import uniqueness
from lineage_quality.engine.jvm_helpers import jvm_helper
from lineage_quality.engine.uniqueness import KeyCounts, col, grouped_key_counts, key_counts
from lineage_quality.errors import DatasetError

log = logging.getLogger(__name__)

SLOT_BITS = 4  # 16 slots per pass: more key sets take more passes
SLOTS = 1 << SLOT_BITS
_SHIFT = 64 - SLOT_BITS
_HASH_MASK = (1 << _SHIFT) - 1
_FITS = 1 << (_SHIFT - 1)  # a value in [-_FITS, _FITS) is one-to-one with its low _SHIFT bits
# Key bytes a shuffle partition keeps to check its repeated hashes itself; past it, it lists them
# and one more scan checks them (bounds a partition's memory whatever the keys' size).
KEY_BYTES_PER_PARTITION = 128 << 20


def _signed(value: int) -> int:
    """`value` as the signed 64-bit long Spark holds."""
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


@attrs.frozen
class _Slot:
    """One slot of a pass: which key set (by position in the pass) and whether it is checked."""

    key_set: int
    checked: bool


@attrs.frozen
class _Pass:
    """Key sets counted together: `key_sets` (indexes into the caller's list), their slots."""

    key_sets: tuple[int, ...]
    slots: tuple[_Slot, ...]


def _self_hashed(df: DataFrame, columns: Sequence[str]) -> bool:
    return len(columns) == 1 and uniqueness.type_of(df, columns[0]) in uniqueness.SELF_HASHED


def _passes(
    df: DataFrame, key_sets: Sequence[Sequence[str]], hashable: Sequence[int]
) -> list[_Pass]:
    """`hashable` key sets, in order, into passes of at most SLOTS slots."""
    passes: list[_Pass] = []
    members: list[int] = []
    slots: list[_Slot] = []
    for i in hashable:
        columns = key_sets[i]
        exact = _self_hashed(df, columns)
        wide = exact and uniqueness.type_of(df, columns[0]) == "bigint"
        if len(slots) + (2 if wide else 1) > SLOTS:
            passes.append(_Pass(tuple(members), tuple(slots)))
            members, slots = [], []
        if exact:
            slots.append(_Slot(len(members), False))  # the value itself
        if not exact or wide:
            slots.append(_Slot(len(members), True))  # a hash (for a bigint: values past the bits)
        members.append(i)
    if members:
        passes.append(_Pass(tuple(members), tuple(slots)))
    return passes


def _packed(slot: int, hashed: Column) -> Column:
    return hashed.bitwiseAND(F.lit(_HASH_MASK)).bitwiseOR(F.lit(_signed(slot << _SHIFT)))


def _slot_hashes(df: DataFrame, key_sets: Sequence[Sequence[str]], p: _Pass) -> list[Column]:
    """Per slot of `p`, the packed hash of a row (null where the key set has a null part or
    the row belongs to the key set's other slot)."""
    out: list[Column] = []
    for at, slot in enumerate(p.slots):
        columns = key_sets[p.key_sets[slot.key_set]]
        present = uniqueness.not_null(columns)
        if not _self_hashed(df, columns):
            out.append(F.when(present, _packed(at, uniqueness.key_hash([col(c) for c in columns]))))
            continue
        value = col(columns[0]).cast("long")
        fits = value.between(-_FITS, _FITS - 1)
        if not slot.checked:  # the value itself: exact, never listed
            out.append(F.when(present & fits, _packed(at, value)))
        else:  # a bigint past the hash bits: hashed like any key, then checked
            out.append(F.when(present & ~fits, _packed(at, uniqueness.key_hash([value]))))
    return out


def _grouping_value(df: DataFrame, column: str) -> Column:
    """`column` as grouping compares it, for its bytes: -0.0 as 0.0 and every NaN alike (the
    rest of the hashable types have one byte form per value)."""
    kind = uniqueness.type_of(df, column)
    if kind not in ("float", "double"):
        return col(column)
    c = col(column)
    return (
        F.when(F.isnan(c), F.lit(float("nan")).cast(kind))
        .when(c == 0, F.lit(0.0).cast(kind))
        .otherwise(c)
    )


def _slot_keys(
    df: DataFrame, key_sets: Sequence[Sequence[str]], p: _Pass
) -> dict[int, list[Column]]:
    """Per checked slot, its key's columns (whose bytes travel with its hash)."""
    out: dict[int, list[Column]] = {}
    for at, slot in enumerate(p.slots):
        if slot.checked:
            out[at] = [_grouping_value(df, c) for c in key_sets[p.key_sets[slot.key_set]]]
    return out


def _carrying(df: DataFrame, hashes: Sequence[Column], *extra: Column) -> DataFrame:
    """Rows of `lq_h`, each non-null hash of `hashes`, with `extra`. One hash needs no
    generator: exploding an array per row costs more than reading the keys (measured)."""
    if len(hashes) == 1:
        return df.select(hashes[0].alias("lq_h"), *extra).where(F.col("lq_h").isNotNull())
    return df.select(F.explode(F.array(*hashes)).alias("lq_h"), *extra).where(
        F.col("lq_h").isNotNull()
    )


def _hidden_keys(
    df: DataFrame, key_sets: Sequence[Sequence[str]], p: _Pass, summary: Any
) -> dict[int, int]:
    """Per slot, the keys its repeated hashes hid (keys - 1 per hash): one scan for all slots
    that listed some, of the rows carrying a listed hash, grouped by their own key set's
    columns (the others masked to null, so they do not split a key)."""
    checked = [at for at, s in enumerate(p.slots) if s.checked and summary.candidateCount(at) > 0]
    hashes = _slot_hashes(df, key_sets, p)
    names = sorted({c for at in checked for c in key_sets[p.key_sets[p.slots[at].key_set]]})
    parts = [col(c).alias(f"lq_c{j}") for j, c in enumerate(names)]
    spark = df.sparkSession
    candidates = DataFrame(summary.candidates(spark._jsparkSession), spark).withColumnRenamed(
        "h", "lq_h"
    )
    rows = _carrying(df, [hashes[at] for at in checked], *parts).join(
        F.broadcast(candidates), "lq_h"
    )
    slot = F.shiftrightunsigned(F.col("lq_h"), _SHIFT)
    masked = []
    for j, c in enumerate(names):
        owners = [at for at in checked if c in key_sets[p.key_sets[p.slots[at].key_set]]]
        masked.append(F.when(slot.isin(owners), F.col(f"lq_c{j}")).alias(f"lq_c{j}"))
    per_key = (
        rows.select("lq_h", slot.alias("lq_s"), *masked)
        .groupBy("lq_s", "lq_h", *[f"lq_c{j}" for j in range(len(names))])
        .count()
    )
    per_hash = per_key.groupBy("lq_s", "lq_h").agg(F.count(F.lit(1)).alias("lq_keys"))
    per_slot = per_hash.groupBy("lq_s").agg(F.sum(F.col("lq_keys") - 1).alias("lq_hidden"))
    return {int(r["lq_s"]): int(r["lq_hidden"]) for r in per_slot.collect()}  # <= SLOTS rows


def _ints(gateway: Any, values: Sequence[int]) -> Any:
    out = gateway.new_array(gateway.jvm.int, len(values))
    for i, v in enumerate(values):
        out[i] = v
    return out


def _strings(gateway: Any, values: Sequence[str]) -> Any:
    out = gateway.new_array(gateway.jvm.String, len(values))
    for i, v in enumerate(values):
        out[i] = v
    return out


def carried() -> bool:
    """Whether checked keys travel with their hashes (`LINEAGE_QUALITY_KEY_BYTES=0`: they are
    checked by reading the data again, to compare timings)."""
    return os.environ.get("LINEAGE_QUALITY_KEY_BYTES", "1") != "0"


def bitmapped() -> bool:
    """Whether a single integer key's values travel as bitmaps of their blocks
    (`LINEAGE_QUALITY_KEY_BITMAPS=0`: as values, to compare timings)."""
    return os.environ.get("LINEAGE_QUALITY_KEY_BITMAPS", "1") != "0"


def columnar() -> bool:
    """Whether a pass reads the scan's column batches where it can (`LINEAGE_QUALITY_KEY_COLUMNS=0`:
    it reads rows of a projection, to compare timings)."""
    return os.environ.get("LINEAGE_QUALITY_KEY_COLUMNS", "1") != "0"


def local_budget() -> int:
    """The bytes a pass may hold in memory to exchange its hashes where Spark runs in local mode
    (KeyHashes' LocalExchange): -1, the JVM's own bound (a quarter of its heap), then files.
    To compare timings, `LINEAGE_QUALITY_LOCAL_EXCHANGE`: `0` none, every pass shuffles;
    `memory` that bound, then a shuffle; `files` (1) every pass through files at once."""
    mode = os.environ.get("LINEAGE_QUALITY_LOCAL_EXCHANGE", "1")
    return {"0": 0, "memory": -2, "files": 1}.get(mode, -1)


def _by_columns(
    df: DataFrame, key_sets: Sequence[Sequence[str]], p: _Pass
) -> tuple[list[str], list[int], list[int], list[int]]:
    """The pass as the JVM helper hashes it from the columns (KeyHashes.summarizeColumns): the
    key columns read, and per slot its kind (the value itself; a bigint past the hash bits,
    hashed; or its key's columns hashed) and its columns, as offsets into one list."""
    names: list[str] = []
    kinds: list[int] = []
    starts: list[int] = [0]
    flat: list[int] = []
    for slot in p.slots:
        columns = key_sets[p.key_sets[slot.key_set]]
        if _self_hashed(df, columns):
            kinds.append(1 if slot.checked else 0)
        else:
            kinds.append(2)
        for c in columns:
            if c not in names:
                names.append(c)
            flat.append(names.index(c))
        starts.append(len(flat))
    return names, kinds, starts, flat


def _summarize_columns(helper: Any, *args: Any) -> Any:
    """`KeyHashes.summarizeColumns`, or None (the row path) when the helper lacks it; a failed
    job is raised as from the row path."""
    try:
        return helper.summarizeColumns(*args)
    except Py4JJavaError:
        raise
    except Py4JError as exc:  # no such method: a helper jar older than this module
        log.warning("key sets hashed from rows: %s", str(exc).strip().splitlines()[0][:200])
        return None


def packed_key_counts(
    df: DataFrame, key_sets: Sequence[Sequence[str]], helper: Any, rows: int | None = None
) -> list[KeyCounts | None]:
    """The counts of up to SLOTS hashable key sets (a bigint key takes two slots) in one
    shuffle; None for a key set with too many repeated hashes (the caller runs the plain path)."""
    passes = _passes(df, key_sets, range(len(key_sets)))
    if len(passes) != 1:
        raise ValueError(f"{len(key_sets)} key sets need more than {SLOTS} slots")
    p = passes[0]
    # A row of every slot's hash (null where it has none), then each checked slot's key: the
    # helper reads each non-null hash, and a checked one's key bytes travel with it.
    hashes = _slot_hashes(df, key_sets, p)
    keys = _slot_keys(df, key_sets, p) if carried() else {}
    key_of: list[int] = []
    fields: list[int] = []
    key_columns: list[Column] = []
    for at in range(len(hashes)):
        key_of.append(len(hashes) + len(key_columns) if at in keys else -1)
        fields.append(len(keys.get(at, [])))
        key_columns += [c.alias(f"lq_k{at}_{j}") for j, c in enumerate(keys.get(at, []))]
    total = None if rows is None else rows * len(key_sets)  # hashes, when the rows are known
    listed = sum(1 << at for at, s in enumerate(p.slots) if s.checked)
    limit = uniqueness.MAX_CANDIDATES
    gateway = df.sparkSession.sparkContext._gateway
    partitions = uniqueness.partitions(df, total)
    summary = None
    if columnar():  # hashed off the scan's column batches, where it is a plain columnar scan
        names, kinds, starts, flat = _by_columns(df, key_sets, p)
        summary = _summarize_columns(
            helper,
            df._jdf,
            _strings(gateway, names),
            _ints(gateway, kinds),
            _ints(gateway, starts),
            _ints(gateway, flat),
            _ints(gateway, [1 if k >= 0 else 0 for k in key_of]),
            SLOT_BITS,
            listed,
            limit,
            partitions,
            KEY_BYTES_PER_PARTITION,
            bitmapped(),
            uniqueness.WEAK_HASH_MODULUS,
            rows or 0,
            local_budget(),
        )
    if summary is None:
        # the helper shuffles the hashes itself, as arrays of longs (KeyHashes.summarizePacked)
        selected = df.select(*[h.alias(f"lq_h{at}") for at, h in enumerate(hashes)], *key_columns)
        summary = helper.summarizePacked(
            selected._jdf,
            SLOT_BITS,
            listed,
            limit,
            partitions,
            _ints(gateway, key_of),
            _ints(gateway, fields),
            KEY_BYTES_PER_PARTITION,
            bitmapped(),
            rows or 0,
            local_budget(),
        )
    hidden = _hidden_keys(df, key_sets, p, summary) if summary.candidateCount() > 0 else {}
    read = int(summary.read())
    out: list[KeyCounts | None] = []
    for k in range(len(key_sets)):
        mine = [at for at, s in enumerate(p.slots) if s.key_set == k]
        if any(summary.overflow(at) for at in mine):
            out.append(None)
            continue
        counted = sum(int(summary.rows(at)) for at in mine)
        distinct = sum(
            int(summary.distinct(at)) + int(summary.hidden(at)) + hidden.get(at, 0) for at in mine
        )
        out.append(KeyCounts(counted, distinct, read if read >= 0 else None))
    return out


def key_set_counts(
    df: DataFrame, key_sets: Sequence[Sequence[str]], rows: int | None = None
) -> list[KeyCounts | Exception]:
    """`key_counts` of each key set (or the error that kept it from being counted), the
    hashable ones of a large dataset in packed passes of up to SLOTS slots."""
    helper = jvm_helper("KeyHashes", "KEY_HASHES")
    large = rows is None or rows >= uniqueness.HASHED_FROM_ROWS
    hashable = [i for i, k in enumerate(key_sets) if uniqueness.hashable(df, k)]
    found: dict[int, KeyCounts | None] = {}
    if helper is not None and large:
        for p in _passes(df, key_sets, hashable):
            members = [key_sets[i] for i in p.key_sets]
            try:
                found.update(
                    zip(p.key_sets, packed_key_counts(df, members, helper, rows), strict=True)
                )
            except Exception as exc:  # each key set on its own: a failure stays with its set
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
                log.warning("packed key sets failed (%s); counting them one by one", first)
    out: list[KeyCounts | Exception] = []
    for i, keys in enumerate(key_sets):
        try:
            if i not in found:
                out.append(key_counts(df, keys, rows))
                continue
            counted = found[i]
            out.append(grouped_key_counts(df, keys) if counted is None else counted)
        except Exception as exc:
            out.append(exc)
    return out


def read_what_the_scan_read(
    df: DataFrame,
    key_sets: Sequence[Sequence[str]],
    found: Sequence[KeyCounts | Exception],
    rows: int,
) -> list[KeyCounts | Exception]:
    """`found`, less the counts of a packed pass that read another number of rows than the
    scan's `rows`: it read another version of the files (replaced between the two reads).
    Those key sets are counted again; when they still differ, each is an error that says so.
    Counts from the other paths (a key set grouped by itself, or counted alone) carry no row
    total and are taken as they are."""
    stale = [
        i
        for i, k in enumerate(found)
        if isinstance(k, KeyCounts) and k.read is not None and k.read != rows
    ]
    if not stale:
        return list(found)
    log.warning(
        "the key sets' pass read %d rows, the scan %d (files replaced meanwhile?): counting "
        "them again",
        getattr(found[stale[0]], "read", 0),
        rows,
    )
    again = key_set_counts(df, [key_sets[i] for i in stale], rows)
    out = list(found)
    for i, counted in zip(stale, again, strict=True):
        if isinstance(counted, KeyCounts) and counted.read is not None and counted.read != rows:
            counted = DatasetError(
                f"the dataset changed while it was evaluated: the scan read {rows} rows, "
                f"the pass counting its keys {counted.read}"
            )
        out[i] = counted
    return out


def overlapped() -> bool:
    """Whether key sets may be counted beside the fused scan (`LINEAGE_QUALITY_OVERLAP_KEY_SETS=0`
    runs them after it, to compare timings)."""
    return os.environ.get("LINEAGE_QUALITY_OVERLAP_KEY_SETS", "1") != "0"


class KeySetCounting:
    """`key_set_counts` running in a thread of its own, started now. `rows` only sizes the
    passes (the files' row total will do). The thread inherits the caller's Spark local
    properties, so its jobs run in the caller's job group: cancelled with it, and known as
    this engine's own jobs (driver/own_runs.py)."""

    def __init__(self, df: DataFrame, key_sets: Sequence[Sequence[str]], rows: int) -> None:
        self._found: list[KeyCounts | Exception] = []
        self._thread = InheritableThread(
            target=self._count, args=(df, key_sets, rows), name="lq-key-sets", daemon=True
        )
        self._thread.start()

    def _count(self, df: DataFrame, key_sets: Sequence[Sequence[str]], rows: int) -> None:
        try:
            # the caller's session, active on this JVM thread too: SQL settings read while
            # planning (table-format catalogs) are otherwise the defaults (evaluation/evaluator.py)
            spark = df.sparkSession
            spark._jvm.org.apache.spark.sql.SparkSession.setActiveSession(  # type: ignore[union-attr]
                spark._jsparkSession
            )
            self._found = key_set_counts(df, key_sets, rows)
        except Exception as exc:  # each key set reports it, as key_set_counts' own errors
            self._found = [exc for _ in key_sets]

    def result(self) -> list[KeyCounts | Exception]:
        """Each key set's counts (or error), once the thread has ended."""
        self._thread.join()
        return self._found
