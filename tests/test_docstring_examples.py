"""Every docstring example in ``src/veil`` runs and prints what it shows.

The examples are numpydoc ``Examples`` sections written as doctests; this runs them in the
default suite (one test per module), so an example that drifts from the code fails here.
Modules that import torch are run only when the optional ``torch`` extra is installed.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil
import warnings
from types import ModuleType

import pytest

import veil

_TORCH = importlib.util.find_spec("torch") is not None


def _module_names() -> list[str]:
    """Every module of the package, except ``__main__`` (importing it runs the CLI)."""
    names = (m.name for m in pkgutil.walk_packages(veil.__path__, "veil."))
    return sorted(n for n in names if not n.endswith(".__main__"))


def _run_examples(module: ModuleType) -> tuple[int, int, str]:
    """``(failed, attempted, report)`` of the docstring examples of ``module``."""
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # examples may show seeded (insecure) noise on purpose
        for t in finder.find(module, module.__name__):
            runner.run(t, out=report.append)
    result = runner.summarize(verbose=False)
    return result.failed, result.attempted, "".join(report)


@pytest.mark.parametrize("name", _module_names())
def test_docstring_examples_run(name: str) -> None:
    if name.startswith("veil.ml.dpsgd") and not _TORCH:
        pytest.skip("needs the optional torch extra")
    failed, _, report = _run_examples(importlib.import_module(name))
    assert failed == 0, report[:4000]


def test_a_wrong_example_is_caught() -> None:
    mod = ModuleType("fake_veil_module")
    source = 'def add(a, b):\n    """Add.\n\n    >>> add(1, 2)\n    4\n    """\n    return a + b\n'
    exec(compile(source, "fake_veil_module.py", "exec"), mod.__dict__)
    failed, attempted, report = _run_examples(mod)
    assert (failed, attempted) == (1, 1)
    assert "Expected:\n    4\nGot:\n    3" in report


def test_the_examples_are_found() -> None:
    names = _module_names()
    assert {"veil.anonymity._encode", "veil.dp.mechanisms", "veil.cli"} <= set(names)
    _, attempted, _ = _run_examples(importlib.import_module("veil.anonymity._encode"))
    assert attempted >= 5
