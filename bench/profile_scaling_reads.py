"""F10 -> F100 against a bare count of the columns the engine's own scan reads (not every column
the rules name, as floor (a) does): how much of the growth is reading and how much is per-row work.

    .venv/bin/python bench/profile_scaling_reads.py [repeat]   (10M rows; 2 warm-up rounds)
"""
# ruff: noqa: E401, E402, E501, E701, E702, I001  (a measuring script, kept as run)
import re, sys, time, statistics
from pathlib import Path
HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE/"systems"), str(HERE.parent/"python")]
import ours
from rulesets import ruleset, columns_of
from settings import session
import lineage_quality.engine.run as R
from pyspark.sql import functions as F
spark = session(ours.conf())
data = str(HERE/"data"/"orders_10000000")
seen = []
inner = R.agg
def spy(df, cols):
    out = inner(df, cols)
    plan = out._jdf.queryExecution().executedPlan().toString()
    seen.append(sorted(set(re.findall(r"ReadSchema: struct<([^>]*)>", plan))))
    return out
R.agg = spy
read = {}
for name in ("F10", "F100"):
    seen.clear(); ours.run(spark, spark.read.parquet(data), ruleset(name))
    cols = sorted({p.split(":")[0] for s in seen for x in s for p in x.split(",")})
    read[name] = cols
    print(name, "engine scan reads", cols, "; rules name", sorted(columns_of(ruleset(name))))
R.agg = inner
systems = {}
for name in ("F10", "F100"):
    systems[f"ours {name}"] = (lambda n: lambda df: ours.run(spark, df, ruleset(n)))(name)
    systems[f"bare count of what ours reads {name}"] = (lambda c: lambda df: df.agg(*[F.count(x) for x in c]).collect())(read[name])
    systems[f"floor (a) {name}"] = (lambda c: lambda df: df.agg(*[F.count(x) for x in c]).collect())(columns_of(ruleset(name)))
def once(run):
    df = spark.read.parquet(data); t = time.perf_counter(); run(df); return time.perf_counter() - t
for _ in range(2):
    for r in systems.values(): once(r)
times = {k: [] for k in systems}
for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 5):
    for k, r in systems.items(): times[k].append(once(r))
for k, w in times.items(): print(f"  {k:45s} min {min(w):.2f}  median {statistics.median(w):.2f}")
for p in ("ours", "bare count of what ours reads", "floor (a)"):
    print(f"  {p}: F100/F10 = {min(times[p+' F100'])/min(times[p+' F10']):.2f}x")
