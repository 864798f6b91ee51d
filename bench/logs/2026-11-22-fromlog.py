import json
import re
import sys

sys.path.insert(0, '/work/main/bench')
from pathlib import Path

from report import write_report

log = Path('/work/main/bench/logs/2026-11-22-run.log').read_text().splitlines()
cases = []
cur = None
for line in log:
    m = re.match(r'^(\w+) ([\d,]+) rows:$', line)
    if m:
        cur = {"rows": int(m.group(2).replace(',', '')), "rules": m.group(1), "times": {}, "errors": {}, "summary": {}, "verdicts": {}, "disagreements": None}
        cases.append(cur); continue
    m = re.match(r'^\s+(\w+)\s+min\s+([\d.]+) s\s+median\s+([\d.]+) s$', line)
    if m and cur is not None:
        cur["summary"][m.group(1)] = [float(m.group(2)), float(m.group(3))]
agree = json.loads(Path(sys.argv[1]).read_text())
by_rules = {c["rules"]: c for c in agree["cases"]}
for c in cases:
    a = by_rules.get(c["rules"])
    if a is not None:
        c["disagreements"] = a["disagreements"]
        c["note"] = ("Verdicts: compared rule by rule on the same rule set over 100,000 rows of the "
                     "same generator, in a run of every system (`bench/run.py --sizes 100000 --repeat 1`); "
                     "this run's own verdict records were lost when it was stopped (see the top).")
prod = json.loads(Path(sys.argv[2]).read_text()) if len(sys.argv) > 2 and Path(sys.argv[2]).exists() else {}
doc = {
    "machine": agree["machine"], "started": 1795363904.0, "seconds": 50 * 60, "repeat": 3,
    "versions": agree["versions"], "missing": agree["missing"], "cases": cases, "producer": prod,
    "command": ".venv/bin/python bench/run.py --sizes 1000000,10000000 --repeat 3",
    "preamble": (
        "**This report is from a run that was stopped.** It ran for 50 min and finished every case "
        "at 1M rows and R10 and R30 at 10M. It was stopped during RU at 10M: DQX's uniqueness "
        "checks (window functions over 10M rows) were still running, and the session had to "
        "end. RU and F10/F30/F100 at 10M are therefore not measured here. "
        "The tables come from that run's log (`bench/logs/2026-11-22-run.log`: min and median of each "
        "system). The verdict comparison comes from a complete run of every system on 100,000 "
        "rows. The producer section was measured separately with `.venv/bin/python "
        "bench/producer.py`. A full `make bench` writes all of it in one run."
    ),
}
write_report(doc, Path('/work/main/BENCHMARKS.md'))
print(len(cases), "cases")
