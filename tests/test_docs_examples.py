"""The README's and the docs' Python examples run as printed and show what their comments say.

Every ```python block of README.md is executed, in order, in one namespace (later blocks use
``adult`` and ``H`` from earlier ones), from a scratch directory in which ``datasets/`` and
``examples/`` are reachable, as a newcomer at the repository root would run them; likewise the
blocks of each ``docs/*.md`` page, one namespace per page.  Top-level statements are checked
against their trailing comments:

* a comment starting with an error class (``# BudgetError, nothing computed``) means the
  statement must raise that error;
* a comment starting with a Python literal (``# 0.2237, 0.2, 298``, ``# True``,
  ``# {'age': 4, ...}``) is the documented value: numbers must agree to the number of decimals
  printed, everything else exactly;
* ``# (epsilon=1.0, delta=0.0)`` documents the fields of a named result (by attribute, else
  by position) and ``# <= 3.0`` a bound; ``print(x)  # ...`` documents the value of ``x``.

The blocks that import torch need the optional ``torch`` extra: the README's is a separate test,
and a docs page with such a block is skipped (with its reason shown by ``pytest -rs``) when torch
is not installed.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

import veil.errors

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOC_PAGES = sorted(p for p in (ROOT / "docs").rglob("*.md") if "```python" in p.read_text("utf-8"))
_FENCE = re.compile(r"^([ \t]*)```python[ \t]*\n(.*?)^[ \t]*```[ \t]*$", re.S | re.M)
_ERROR_COMMENT = re.compile(r"#\s*([A-Z]\w*Error)\b")
#: ``# (epsilon=1.0, delta=0.0)``: fields of a named result (attribute or position).
_FIELDS = re.compile(r"\(\s*(\w+\s*=\s*[^,()=]+(?:,\s*\w+\s*=\s*[^,()=]+)*)\s*\)")
#: ``# <= 3.0``: a documented bound.
_BOUND = re.compile(r"(<=|>=|<|>)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(?![\w.])")
_OPS = {"<=": float.__le__, ">=": float.__ge__, "<": float.__lt__, ">": float.__gt__}


def _python_blocks(page: Path = README) -> list[tuple[int, str]]:
    """Return ``(line number, code)`` of every ```python block of ``page``."""
    text = page.read_text(encoding="utf-8")
    blocks = []
    for m in _FENCE.finditer(text):
        indent = len(m.group(1))
        code = "\n".join(line[indent:] for line in m.group(2).splitlines())
        blocks.append((text[: m.start(2)].count("\n") + 1, code))
    return blocks


def _documented_value(comment: str) -> tuple[str, Any] | None:
    """Return ``(text, value)`` of the longest prefix of a comment that is a Python literal."""
    comment = comment.strip()
    for end in range(len(comment), 0, -1):
        text = comment[:end].strip()
        if text.endswith(",") or text.startswith("..."):  # "# 1.0, ...": 1.0; "# ... and": prose
            continue
        try:
            return text, ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return None


def _check_fields(actual: Any, comment: str, where: str) -> bool:
    """Check a ``(name=value, ...)`` or ``<= bound`` comment; False if it is neither."""
    comment = comment.strip()
    m = _BOUND.match(comment)
    if m:
        assert _OPS[m.group(1)](float(actual), float(m.group(2))), (
            f"{where}: got {actual!r}, the docs say {m.group(0)}"
        )
        return True
    m = _FIELDS.match(comment)
    if not m:
        return False
    for i, item in enumerate(m.group(1).split(",")):
        name, literal = (part.strip() for part in item.split("=", 1))
        got = getattr(actual, name) if hasattr(actual, name) else list(actual)[i]
        assert _agrees(got, ast.literal_eval(literal), literal), (
            f"{where}: got {name}={got!r}, the docs say {name}={literal}"
        )
    return True


def _decimals(literal: str) -> int:
    return len(literal.split(".")[1]) if "." in literal else 0


def _agrees(actual: Any, documented: Any, literal: str) -> bool:
    """Compare a value with its documented literal (numbers to the printed precision)."""
    if isinstance(documented, bool) or actual is None:
        return actual == documented
    if isinstance(documented, (int, float)):
        tol = 0.5 * 10.0 ** -_decimals(literal) + 1e-12
        return abs(float(actual) - documented) <= tol
    if isinstance(documented, (tuple, list)):
        parts = _split_top(literal)
        actual_seq = list(actual)
        return len(actual_seq) == len(documented) and all(
            _agrees(a, d, p) for a, d, p in zip(actual_seq, documented, parts, strict=True)
        )
    if isinstance(documented, dict):
        return dict(actual) == documented
    return actual == documented


def _split_top(text: str) -> list[str]:
    """The source text of each element of a tuple/list literal (for per-element precision).

    A literal that is not a tuple or list is one part.  Element texts come from the parse tree,
    so brackets and commas inside strings (``'[15, 20['``) do not split.
    """
    node = ast.parse(text.strip(), mode="eval").body
    if isinstance(node, (ast.Tuple, ast.List)):
        return [ast.get_source_segment(text.strip(), e) or "" for e in node.elts]
    return [text]


def _run_block(code: str, first_line: int, ns: dict[str, Any], page: str = "README.md") -> int:
    """Execute one block statement by statement; return the number of checked comments."""
    lines = code.splitlines()
    checked = 0
    for stmt in ast.parse(code).body:
        where = f"{page}:{first_line + stmt.lineno - 1}"
        last = lines[stmt.end_lineno - 1]
        comment = last.split("#", 1)[1] if "#" in last and not isinstance(stmt, ast.For) else ""
        error = _ERROR_COMMENT.match("#" + comment) if comment else None
        if error:
            exc = getattr(veil.errors, error.group(1))
            with pytest.raises(exc):
                exec(compile(ast.Module([stmt], []), where, "exec"), ns)
            checked += 1
            continue
        if isinstance(stmt, ast.Expr):
            node = stmt.value
            shown = (  # print(x)  # 0.5: the documented value is x's
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "print"
                and len(node.args) == 1
                and not node.keywords
            )
            if shown:
                node = node.args[0]  # type: ignore[union-attr]
            value = eval(compile(ast.Expression(node), where, "eval"), ns)
            if shown:
                print(value)
            if comment and _check_fields(value, comment, where):
                checked += 1
                continue
            found = _documented_value(comment) if comment else None
            if found is not None:
                literal, documented = found
                assert _agrees(value, documented, literal), (
                    f"{where}: got {value!r}, the docs say {literal}"
                )
                checked += 1
        else:
            exec(compile(ast.Module([stmt], []), where, "exec"), ns)
    return checked


@pytest.fixture()
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("datasets", "examples"):
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _is_torch_block(code: str) -> bool:
    return "import torch" in code


def test_readme_has_python_examples() -> None:
    blocks = _python_blocks()
    assert len(blocks) >= 8
    assert sum(_is_torch_block(c) for _, c in blocks) == 1


@pytest.mark.filterwarnings("ignore::veil.errors.PrivacyLeakWarning")
def test_readme_python_blocks_run_as_documented(scratch: Path) -> None:
    ns: dict[str, Any] = {"__name__": "__main__"}
    checked = 0
    for first_line, code in _python_blocks():
        if not _is_torch_block(code):
            checked += _run_block(code, first_line, ns)
    # the documented values that the comments carry are really compared
    assert checked >= 7
    assert ns["report"]["targets"]["all_met"] is True
    assert (scratch / "visits.csv").exists()  # written for the `veil query` example
    assert (scratch / "adult.csv").exists()  # written for the `veil check` example
    assert ns["acc"].remaining()[0] < 1e-9  # "~0": the ML example spent the whole budget


def test_readme_dpsgd_block_runs_as_documented(scratch: Path) -> None:
    pytest.importorskip("torch", reason="README DP-SGD example needs the torch extra")
    (first_line, code) = next((n, c) for n, c in _python_blocks() if _is_torch_block(c))
    ns: dict[str, Any] = {"__name__": "__main__"}
    _run_block(code, first_line, ns)
    opt, model, loss_fn = ns["opt"], ns["model"], ns["loss_fn"]
    assert opt.get_epsilon(1e-5) <= 3.0
    # "one more step would raise BudgetError"
    x, y = ns["x"][:100], ns["y"][:100]
    opt.zero_grad()
    loss_fn(model(x), y).backward()
    with pytest.raises(veil.errors.BudgetError):
        opt.step()


@pytest.mark.parametrize("page", DOC_PAGES, ids=[p.name for p in DOC_PAGES])
@pytest.mark.filterwarnings("ignore::veil.errors.PrivacyLeakWarning")
def test_docs_python_blocks_run_as_documented(page: Path, scratch: Path) -> None:
    """Each docs page's Python blocks run in order in one namespace, comments checked."""
    blocks = _python_blocks(page)
    if any(_is_torch_block(c) for _, c in blocks):
        pytest.importorskip("torch", reason=f"{page.name} has DP-SGD examples (torch extra)")
    ns: dict[str, Any] = {"__name__": "__main__"}
    name = page.relative_to(ROOT).as_posix()
    assert blocks
    for line, code in blocks:  # a failing statement or a wrong documented value fails here
        _run_block(code, line, ns, name)


def test_docs_pages_with_examples_are_found() -> None:
    names = {p.name for p in DOC_PAGES}
    assert {"anonymity.md", "dp.md", "dpsgd.md", "ml.md", "crypto.md"} <= names


def test_documented_fields_and_bounds_are_checked() -> None:
    """``# (epsilon=1.0, delta=0.0)`` and ``# <= 3.0`` comments are compared, not skipped."""
    from collections import namedtuple

    spent = namedtuple("spent", "epsilon delta")
    assert _check_fields(spent(1.0, 0.0), "(epsilon=1.0, delta=0.0) charged once", "x")
    assert _check_fields((2.2, 1e-06), "(epsilon=2.2, delta=1e-06): 1.0 + 1.2", "x")
    with pytest.raises(AssertionError, match="epsilon=1.0"):
        _check_fields(spent(1.2, 0.0), "(epsilon=1.0, delta=0.0)", "x")
    assert _check_fields(2.99, "<= 3.0; one more step would raise BudgetError", "x")
    with pytest.raises(AssertionError, match="<= 3.0"):
        _check_fields(3.01, "<= 3.0", "x")
    assert not _check_fields(1.0, "about 3 (prose)", "x")
