"""Evaluation: ``veil.scan`` precision and recall against the labelled ground truth of tests/scan.

The pool is four tables: the bundled insurance table (13 columns) and Adult (15), the generated
PII table (``tests/scan/_ground_truth.synthetic_pii``, 27 columns) and the generated national
identifiers with hard negatives (``tests/scan/_ground_truth_national.national_id_pii``,
26 columns).  Each is scanned twice: with its headers, and with every header replaced by
``col_1..col_n`` (content alone decides).

Printed: precision and recall per role (identifier, quasi, sensitive) for both, precision and
recall per identifier kind for the national kinds (``uk_nino``, ``kra_pin``, ``ca_sin``,
``nl_bsn``) and for ``phone`` and ``free_text`` -- a column's true kind is its label in the
generated tables and "none" elsewhere -- and every misclassified column with a few values.
The date, UTC time and load average (as ``uptime`` prints it) before and after are printed too.

Run::

    .venv-ci/bin/python benchmarks/scan_accuracy.py
    .venv-ci/bin/python benchmarks/scan_accuracy.py --json out.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import importlib.util
import json
from pathlib import Path
from typing import Any

import pandas as pd
from _timing import load_line  # benchmarks/_timing.py

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("uk_nino", "kra_pin", "ca_sin", "nl_bsn", "phone", "free_text")
ROLES = ("identifier", "quasi", "sensitive")


def _load(path: Path) -> Any:
    """Import a ground-truth module by its file path (a peer's installed top-level ``tests``
    package would shadow the repository's ``tests`` folder for ``import tests.scan...``)."""
    spec = importlib.util.spec_from_file_location(f"_veil_bench_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def tables() -> list[tuple[str, pd.DataFrame, dict[str, str], dict[str, str]]]:
    """(name, frame, true roles, true kinds) of the four labelled tables."""
    from veil.io import read

    gt = _load(ROOT / "tests" / "scan" / "_ground_truth.py")
    gtn = _load(ROOT / "tests" / "scan" / "_ground_truth_national.py")
    syn, syn_roles, syn_kinds = gt.synthetic_pii()
    nat, nat_roles, nat_kinds = gtn.national_id_pii()
    ins = read(ROOT / "datasets" / "insurance_ke" / "Insurance_data_ke.csv")
    adult = read(ROOT / "datasets" / "adult" / "adult.data", names=gt.ADULT_NAMES)
    return [
        ("insurance", ins, gt.INSURANCE_ROLES, {}),
        ("adult", adult, gt.ADULT_ROLES, {}),
        ("synthetic_pii", syn, syn_roles, syn_kinds),
        ("national_id_pii", nat, nat_roles, nat_kinds),
    ]


def _pr(pred: list[str], truth: list[str], label: str) -> dict[str, Any]:
    tp = sum(p == label and t == label for p, t in zip(pred, truth))
    fp = sum(p == label and t != label for p, t in zip(pred, truth))
    fn = sum(p != label and t == label for p, t in zip(pred, truth))
    return {
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
        "tp": tp,
        "fp": fp,
        "fn": fn,
    }


def evaluate(renamed: bool) -> dict[str, Any]:
    """Scan every table (headers kept or replaced) and score roles and kinds, pooled."""
    from veil.deid import scan

    rows = []
    for name, frame, roles, kinds in tables():
        names = {c: (f"col_{i + 1}" if renamed else c) for i, c in enumerate(frame.columns)}
        r = scan(frame.rename(columns=names))
        for c in frame.columns:
            f = r[names[c]]
            rows.append(
                {
                    "table": name,
                    "column": str(c),
                    "true_role": roles[c],
                    "role": f.role.value,
                    "true_kind": kinds.get(c, "none"),
                    "kind": f.kind,
                    "reason": f.reason,
                    "examples": [str(v) for v in frame[c].dropna().unique()[:3]],
                }
            )
    roles_out = {
        role: _pr([x["role"] for x in rows], [x["true_role"] for x in rows], role) for role in ROLES
    }
    kinds_out = {
        k: _pr([x["kind"] for x in rows], [x["true_kind"] for x in rows], k) for k in KINDS
    }
    wrong = [
        x
        for x in rows
        if x["role"] != x["true_role"]
        or (x["true_kind"] not in ("none", "other") and x["kind"] != x["true_kind"])
        or (x["kind"] in KINDS and x["kind"] != x["true_kind"])
    ]
    return {"columns": len(rows), "roles": roles_out, "kinds": kinds_out, "wrong": wrong}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the results to this file")
    args = ap.parse_args(argv)
    start = dt.datetime.now(dt.timezone.utc)
    load0 = load_line()
    out: dict[str, Any] = {"headers": evaluate(False), "renamed": evaluate(True)}
    end = dt.datetime.now(dt.timezone.utc)
    out["when"] = f"{start:%Y-%m-%d %H:%M:%S}-{end:%H:%M:%S} UTC"
    out["load"] = f"{load0} -> {load_line()}"
    print(f"{out['when']}, load average (1/5/15 min) {out['load']}")
    for mode in ("headers", "renamed"):
        res = out[mode]
        print(f"\n== {mode}: {res['columns']} columns")
        for label, d in (*res["roles"].items(), *res["kinds"].items()):
            print(
                f"  {label:<11} precision {d['precision']:.3f}  recall {d['recall']:.3f}"
                f"  (tp {d['tp']}, fp {d['fp']}, fn {d['fn']})"
            )
        for x in res["wrong"]:
            print(
                f"  WRONG {x['table']}:{x['column']}: expected {x['true_role']}/{x['true_kind']},"
                f" got {x['role']}/{x['kind']} ({x['reason']}); e.g. {x['examples']}"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
