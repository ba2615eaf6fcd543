"""Turn the k-anonymity engine's summary (``report["anonymity"]``) into rows for the HTML report.

:func:`anonymity_view` is a pure function: it reads the dict that
:meth:`veil.anonymity.AnonymizationResult.summary` returns (plus the keys that the policy bridge
adds) and gives back plain strings for the template's tables, and the before/after class-size
histogram as a small self-contained HTML fragment (CSS bars, no images, no scripts) in which
every value is escaped.  Keys that an algorithm does not produce (``node`` for Mondrian,
``journalist`` without a population table, ...) are skipped or shown as "n/a".
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

__all__ = ["anonymity_view", "class_size_histogram_html", "engine_actions"]

NA = "n/a"

_UTILITY: dict[str, str] = {
    "loss": "generalization loss / NCP (0 = original values, 1 = everything suppressed)",
    "ncp": "normalized certainty penalty, NCP (0 = original values, 1 = fully generalized)",
    "precision": "1 - Prec (Sweeney): mean generalization level over the QI cells (0 to 1)",
    "entropy": "non-uniform entropy, bits lost over the QI cells (0 = original values)",
    "dm": "discernibility metric DM: sum of squared class sizes (+ n per suppressed record)",
    "dm_star": "discernibility DM*: sum of squared class sizes, suppressed records as one class",
    "aecs": "average equivalence class size (records / classes, suppressed records as one class)",
    "cavg": "normalized average class size C_avg = records / classes / k (1 is ideal)",
    "info_loss": "microaggregation information loss SSE / SST (0 to 1)",
    "sse": "within-group sum of squared errors (SSE)",
    "sst": "total sum of squares (SST)",
}

_ALGORITHMS = {
    "optimal": "optimal global recoding (full-domain generalization over the hierarchy lattice)",
    "heuristic": "heuristic global recoding (best effort over the hierarchy lattice)",
    "mondrian": "Mondrian multidimensional local recoding (partitions)",
    "mdav": "MDAV microaggregation",
}


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def fmt_num(v: Any, digits: int = 4) -> str:
    """A number for a table cell (``n/a`` for None / NaN)."""
    if v is None:
        return NA
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if not math.isfinite(v):
            return NA
        if v.is_integer() and abs(v) >= 1:
            return f"{int(v):,}"
        return f"{v:,.{digits}g}" if abs(v) < 1e6 else f"{v:,.0f}"
    return str(v)


def fmt_pct(v: Any) -> str:
    """A share in [0, 1] as a percentage (``n/a`` for None)."""
    if not _is_num(v) or not math.isfinite(float(v)):
        return NA
    p = 100.0 * float(v)
    if p != 0 and abs(p) < 0.1:
        return f"{p:.2g}%"
    return f"{p:.1f}%"


def _model_text(m: Any) -> str:
    if not isinstance(m, Mapping):
        return str(m)
    name = str(m.get("model", "model"))
    params = [f"{k}={fmt_num(v)}" for k, v in m.items() if k != "model"]
    return f"{name} ({', '.join(params)})" if params else name


def _k_of(summary: Mapping[str, Any]) -> int | None:
    for m in summary.get("models") or []:
        if isinstance(m, Mapping) and m.get("model") == "k-anonymity" and _is_num(m.get("k")):
            return int(m["k"])
    return None


def _sub(d: Any, key: str) -> Any:
    return d.get(key) if isinstance(d, Mapping) else None


def _risk_rows(before: Any, after: Any) -> tuple[list[dict[str, str]], list[str]]:
    """Rows ``{label, before, after}`` and explanatory notes."""
    rows: list[dict[str, str]] = []
    notes: list[str] = []
    if not isinstance(before, Mapping) and not isinstance(after, Mapping):
        return rows, notes
    threshold = _sub(after, "threshold")
    if threshold is None:
        threshold = _sub(before, "threshold")
    thr = fmt_pct(threshold) if threshold is not None else "the threshold"

    def add(label: str, get: Any, fmt: Any, *, cls: str = "") -> None:
        rows.append(
            {"label": label, "before": fmt(get(before)), "after": fmt(get(after)), "cls": cls}
        )

    add("records", lambda r: _sub(r, "records"), fmt_num)
    add("equivalence classes", lambda r: _sub(r, "classes"), fmt_num)
    for attacker in ("prosecutor", "journalist"):
        b, a = _sub(before, attacker), _sub(after, attacker)
        if not isinstance(b, Mapping) and not isinstance(a, Mapping):
            if attacker == "journalist":
                add("journalist risk", lambda r: None, fmt_pct, cls="muted")
                notes.append(
                    "Journalist risk needs a population table (k-map, policy key "
                    "privacy.population); none was given, so the prosecutor figures are the "
                    "upper bound."
                )
            continue
        add(
            f"{attacker} risk: highest",
            lambda r, at=attacker: _sub(_sub(r, at), "highest"),
            fmt_pct,
        )
        add(
            f"{attacker} risk: average",
            lambda r, at=attacker: _sub(_sub(r, at), "average"),
            fmt_pct,
        )
        add(
            f"{attacker} risk: records at risk (risk > {thr})",
            lambda r, at=attacker: _sub(_sub(r, at), "records_at_risk"),
            fmt_pct,
        )
    add("marketer risk (expected share re-identified)", lambda r: _sub(r, "marketer"), fmt_pct)
    add(
        "sample uniqueness (records alone in their class)",
        lambda r: _sub(r, "sample_uniqueness"),
        fmt_pct,
    )
    pu = [_sub(r, "population_uniqueness") for r in (before, after)]
    if any(v is not None for v in pu):
        add("population uniqueness (estimate)", lambda r: _sub(r, "population_uniqueness"), fmt_pct)
    else:
        add("population uniqueness (estimate)", lambda r: None, fmt_pct, cls="muted")
        notes.append(
            "Population uniqueness needs a sampling fraction (privacy.sampling_fraction, or a "
            "k-map population table); none was given."
        )
    return rows, notes


def _bin_upper(label: str) -> float | None:
    """Upper bound of a class-size bin label ('1', '3-4', '100+')."""
    nums = re.findall(r"\d+", label)
    if not nums:
        return None
    if label.strip().endswith("+"):
        return math.inf
    return float(nums[-1])


def class_size_histogram_html(
    before: Sequence[Mapping[str, Any]] | None,
    after: Sequence[Mapping[str, Any]] | None,
    *,
    k: int | None = None,
) -> Markup | None:
    """The class-size distribution before and after as an HTML table with CSS bars.

    ``before`` / ``after`` are lists of ``{"size": label, "classes": int, "records": int}`` (see
    :func:`veil.anonymity.class_size_histogram`).  Bars are proportional to the share of records
    in each bin; bins entirely below ``k`` are flagged.

    Examples
    --------
    >>> h = class_size_histogram_html([{"size": "1", "classes": 3, "records": 3}],
    ...                               [{"size": "1", "classes": 0, "records": 0}], k=2)
    >>> 'data-size="1"' in h and 'data-records="3"' in h and "below k" in h
    True
    """
    before = [b for b in (before or []) if isinstance(b, Mapping)]
    after = [a for a in (after or []) if isinstance(a, Mapping)]
    if not before and not after:
        return None
    labels: list[str] = []
    for b in (*before, *after):
        lab = str(b.get("size", "?"))
        if lab not in labels:
            labels.append(lab)
    sides = []
    for side in (before, after):
        by = {str(b.get("size", "?")): b for b in side}
        total = sum(int(b.get("records") or 0) for b in side)
        sides.append((by, total))
    e = html.escape
    out = [
        '<table class="hist">',
        "<tr><th>class size</th><th>before: records (classes)</th>"
        "<th>after: records (classes)</th></tr>",
    ]
    for lab in labels:
        hi = _bin_upper(lab)
        low = k is not None and hi is not None and hi < k
        cells = []
        for name, (by, total) in zip(("before", "after"), sides):
            b = by.get(lab)
            if b is None:
                cells.append(f'<td class="{name}"><span class="muted">{NA}</span></td>')
                continue
            rec = int(b.get("records") or 0)
            cls = int(b.get("classes") or 0)
            share = rec / total if total else 0.0
            width = f"{60.0 * share:.2f}"  # leave room for the figures
            cells.append(
                f'<td class="{name}" data-records="{rec}" data-classes="{cls}">'
                f'<span class="bar {name}" style="width:{width}%"></span> '
                f"{e(fmt_num(rec))} ({e(fmt_pct(share))}) · {e(fmt_num(cls))} "
                f"class{'es' if cls != 1 else ''}</td>"
            )
        flag = ' <span class="bad">below k</span>' if low else ""
        out.append(
            f'<tr data-size="{e(lab, quote=True)}"><td>{e(lab)}{flag}</td>{"".join(cells)}</tr>'
        )
    out.append("</table>")
    return Markup("\n".join(out))


def _utility_value(value: Any) -> str:
    if value is None:
        return NA
    if isinstance(value, Mapping):
        return "; ".join(f"{kk}: {fmt_num(vv)}" for kk, vv in value.items())
    return fmt_num(value)


def _utility_rows(after: Any, before: Any) -> list[dict[str, str]]:
    """Rows ``{name, before, value, meaning}``: ``before`` is the metric of the original table
    taken as a release (no generalization, no suppression), ``value`` that of the release."""
    after = after if isinstance(after, Mapping) else {}
    before = before if isinstance(before, Mapping) else {}
    rows = []
    for name in [*after, *(n for n in before if n not in after)]:
        if name == "column_ncp":
            continue
        rows.append(
            {
                "name": str(name),
                "before": _utility_value(before.get(name)),
                "value": _utility_value(after.get(name)),
                "meaning": _UTILITY.get(name, ""),
            }
        )
    return rows


def _classification_rows(cu: Any) -> list[dict[str, str]]:
    """Rows ``{label, value}`` of the classification utility (empty when not computed)."""
    if not isinstance(cu, Mapping) or not cu:
        return []
    rows = [
        ("target column", str(cu.get("target", NA))),
        ("model", str(cu.get("model", NA))),
        ("accuracy, trained on the original", fmt_pct(cu.get("original_accuracy"))),
        ("accuracy, trained on the release", fmt_pct(cu.get("release_accuracy"))),
        ("majority-class baseline", fmt_pct(cu.get("baseline_accuracy"))),
        ("accuracy lost", fmt_pct(cu.get("accuracy_loss"))),
        ("held-out original records (test)", fmt_num(cu.get("n_test"))),
    ]
    return [{"label": a, "value": b} for a, b in rows]


_ENGINE_ACTIONS = {
    "mondrian": "recoded per partition (Mondrian local recoding)",
    "mdav": "replaced by its group's mean (MDAV microaggregation)",
}


def engine_actions(summary: Mapping[str, Any] | None) -> dict[str, str]:
    """What the k-anonymity engine did to each quasi-identifier, as a line of text.

    The report's "What was done to each column" table shows the policy's operators; a
    quasi-identifier the engine generalized is not "kept as is".  Columns the engine left at
    their original values (level 0 of the chosen node) get no line.

    Examples
    --------
    >>> engine_actions({"algorithm": "optimal", "node": {"age": 2, "sex": 0}})
    {'age': 'k-anonymity engine: generalized to level 2 of its hierarchy'}
    >>> engine_actions({"algorithm": "mondrian", "quasi_identifiers": ["age"]})
    {'age': 'k-anonymity engine: recoded per partition (Mondrian local recoding)'}
    """
    if not isinstance(summary, Mapping) or not summary:
        return {}
    node = summary.get("node")
    if isinstance(node, Mapping) and node:
        return {
            str(q): f"k-anonymity engine: generalized to level {fmt_num(lv)} of its hierarchy"
            for q, lv in node.items()
            if lv != 0
        }
    text = _ENGINE_ACTIONS.get(str(summary.get("algorithm")))
    qis = summary.get("quasi_identifiers") or []
    return {str(q): f"k-anonymity engine: {text}" for q in qis} if text else {}


def anonymity_view(summary: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Rows and fragments for the report's "k-anonymity engine" section (None without a summary).

    Returns a dict with ``overview`` (label/value rows), ``transformation`` (``{"kind": "node" |
    "partitions", "rows": [...], "text": ...}``), ``suppression`` (text), ``risk`` (label /
    before / after rows), ``risk_notes``, ``risk_threshold`` (what "records at risk" counts),
    ``utility`` (name / value / meaning rows),
    ``histogram`` (:class:`markupsafe.Markup` or None) and ``raw_json``.  All values are plain
    strings (escaped by the template) except ``histogram``, which is escaped here.

    Examples
    --------
    >>> v = anonymity_view({"algorithm": "optimal", "node": {"age": 2}, "records": 10,
    ...                     "suppressed": 1, "suppressed_share": 0.1})
    >>> v["transformation"]["rows"][0]["qi"], v["transformation"]["rows"][0]["level"]
    ('age', '2')
    >>> v["suppression"]
    '1 of 10 records (10.0%)'
    """
    if not isinstance(summary, Mapping) or not summary:
        return None
    s = summary
    algorithm = s.get("algorithm")
    k = _k_of(s)

    overview: list[dict[str, str]] = []

    def ov(label: str, value: str | None) -> None:
        if value is not None:
            overview.append({"label": label, "value": value})

    if algorithm is not None:
        ov("algorithm", _ALGORITHMS.get(str(algorithm), str(algorithm)))
        if s.get("mondrian_mode"):
            overview[-1]["value"] += f", {s['mondrian_mode']}"
    models = s.get("models")
    if models:
        ov("privacy models", "; ".join(_model_text(m) for m in models))
    qis = s.get("quasi_identifiers")
    if qis:
        ov("quasi-identifiers", ", ".join(str(q) for q in qis))
    if s.get("sensitive"):
        ov("sensitive columns", ", ".join(str(c) for c in s["sensitive"]))
    if s.get("records") is not None:
        rel = s.get("release_records")
        ov(
            "records",
            fmt_num(s["records"]) + (f" in, {fmt_num(rel)} released" if rel is not None else ""),
        )
    if s.get("classes") is not None:
        ov("equivalence classes in the release", fmt_num(s["classes"]))
    if s.get("objective") is not None:
        ov("objective (minimized)", f"{s['objective']} = {fmt_num(s.get('objective_value'))}")
    if s.get("n_nodes_total") is not None or s.get("node") is not None:
        ov(
            "lattice nodes checked",
            f"{fmt_num(s.get('n_nodes_checked'))} of {fmt_num(s.get('n_nodes_total'))}",
        )
    if s.get("optimal") is not None:
        ov("optimality proved", fmt_num(s["optimal"]))
    t = s.get("total_s", s.get("elapsed_s"))
    if _is_num(t):
        ov("time", f"{float(t):.3f} s")

    # the chosen node, or the partitions
    node = s.get("node")
    column_ncp = _sub(s.get("utility"), "column_ncp")
    column_ncp = column_ncp if isinstance(column_ncp, Mapping) else {}
    transformation: dict[str, Any]
    if isinstance(node, Mapping) and node:
        transformation = {
            "kind": "node",
            "text": "Every quasi-identifier generalized to one level of its hierarchy "
            "(0 = original values).",
            "rows": [
                {
                    "qi": str(q),
                    "level": fmt_num(lv),
                    "note": "original values" if lv == 0 else "",
                }
                for q, lv in node.items()
            ],
        }
    else:
        cs = s.get("class_sizes") if isinstance(s.get("class_sizes"), Mapping) else {}
        text = f"{fmt_num(s.get('classes'))} partitions (equivalence classes)"
        if cs:
            text += (
                f"; class sizes {fmt_num(cs.get('min'))} to {fmt_num(cs.get('max'))}, "
                f"mean {fmt_num(cs.get('mean'), 3)}"
            )
        kinds = s.get("qi_kinds") if isinstance(s.get("qi_kinds"), Mapping) else {}
        names = list(qis or []) or list(kinds) or list(column_ncp)
        rows = [
            {
                "qi": str(q),
                "kind": {"hier": "hierarchy", "numeric": "numeric interval"}.get(
                    str(kinds.get(q)), str(kinds.get(q)) if q in kinds else NA
                ),
                "ncp": fmt_pct(column_ncp.get(q)) if q in column_ncp else NA,
            }
            for q in names
        ]
        transformation = {"kind": "partitions", "text": text + ".", "rows": rows}

    suppression = None
    if s.get("suppressed") is not None:
        n = s.get("records")
        suppression = f"{fmt_num(s['suppressed'])}"
        if n is not None:
            suppression += f" of {fmt_num(n)} records"
        if s.get("suppressed_share") is not None:
            suppression += f" ({fmt_pct(s['suppressed_share'])})"
        if s.get("suppression_limit") is not None:
            suppression += f"; limit {fmt_pct(s['suppression_limit'])}"
        if s["suppressed"] and s.get("suppressed_records"):
            how = s["suppressed_records"]
            suppression += (
                "; dropped from the release"
                if how == "dropped"
                else "; kept with every quasi-identifier masked"
                if how == "masked"
                else f"; {how}"
            )

    risk, risk_notes = _risk_rows(s.get("risk_before"), s.get("risk_after"))
    threshold = _sub(s.get("risk_after"), "threshold")
    if threshold is None:
        threshold = _sub(s.get("risk_before"), "threshold")
    risk_threshold = None
    if _is_num(threshold) and 0 < float(threshold) <= 1:
        risk_threshold = (
            f"Records at risk: records whose prosecutor risk (1 / class size) exceeds "
            f"{fmt_pct(threshold)}, i.e. records in a class of fewer than "
            f"{fmt_num(1 / float(threshold), 3)} records (El Emam & Dankar 2008; 20% is the "
            "usual default)."
        )

    utility = _utility_rows(s.get("utility"), s.get("utility_before"))
    classification = _classification_rows(s.get("classification_utility"))
    detail = s.get("suppression") if isinstance(s.get("suppression"), Mapping) else {}
    suppressed_by_size = [
        {
            "size": str(b.get("size", "?")),
            "records": fmt_num(b.get("records")),
            "classes": fmt_num(b.get("classes")),
        }
        for b in detail.get("by_class_size") or []
        if isinstance(b, Mapping)
    ]
    by_model = detail.get("by_model") if isinstance(detail.get("by_model"), Mapping) else {}
    suppressed_by_model = [{"model": str(m), "records": fmt_num(v)} for m, v in by_model.items()]

    histogram = class_size_histogram_html(
        _sub(s.get("risk_before"), "class_sizes"), _sub(s.get("risk_after"), "class_sizes"), k=k
    )
    return {
        "overview": overview,
        "transformation": transformation,
        "suppression": suppression,
        "risk": risk,
        "risk_notes": risk_notes,
        "risk_threshold": risk_threshold,
        "utility": utility,
        "classification": classification,
        "suppressed_by_size": suppressed_by_size,
        "suppressed_by_model": suppressed_by_model,
        "histogram": histogram,
        "k": k,
        "raw_json": json.dumps(s, indent=2, default=str),
    }
