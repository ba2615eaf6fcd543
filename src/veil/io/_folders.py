"""Output folders: created with their parents only when a command writes, removed on failure."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from veil.errors import InputError

__all__ = ["check_folder", "folder_problem", "output_folder"]


def folder_problem(folder: str | os.PathLike[str]) -> str | None:
    """Why ``folder`` cannot be created (with its missing parents) or used for output, or None.

    Only what can be told without creating anything: the nearest existing ancestor must be a
    folder (``report.csv/out`` cannot be made under the file ``report.csv``).  Commands call it
    before any work, so that a path that cannot be written is refused before a release exists.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "file.csv").write_text("a\\n")
    >>> folder_problem(d / "new" / "deeper") is None
    True
    >>> folder_problem(d / "file.csv" / "sub").endswith("file.csv is not a folder")
    True
    """
    p = Path(folder) if str(folder) else Path(".")
    while not p.exists() and not p.is_symlink() and p.parent != p:
        p = p.parent
    if p.is_dir():
        return None
    if p.is_symlink() and not p.exists():
        return f"{p} is a broken link"
    return f"{p} is not a folder" if p.exists() else f"{p} does not exist"


def check_folder(
    folder: str | os.PathLike[str], label: str, error: type[Exception] = InputError
) -> None:
    """Raise ``error("{label}: {problem}")`` when :func:`folder_problem` finds one.

    The check every command runs on its output folder before any work (``veil anonymize``,
    ``veil query``, ``veil reidentify``, ``veil scan``, ``veil crypto keygen``), and
    :func:`output_folder` before creating it.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "file.csv").write_text("a\\n")
    >>> check_folder(d / "new", "--out")
    >>> try:
    ...     check_folder(d / "file.csv" / "sub", "--out x")
    ... except InputError as exc:
    ...     str(exc).startswith("--out x: ")
    True
    """
    problem = folder_problem(folder)
    if problem is not None:
        raise error(f"{label}: {problem}")


@contextlib.contextmanager
def output_folder(folder: str | os.PathLike[str]) -> Iterator[Path]:
    """Create ``folder`` and its missing parents for the block; if the block fails, remove them.

    Every command writing output uses it (``veil anonymize --out DIR``, the file outputs of
    ``veil query``, ``veil reidentify`` and ``veil scan``) only after its checks passed and
    its result exists, so a failed run leaves no folder behind: the top-most folder this call
    created is removed with what was written into it.  Folders that existed are left alone.

    Raises
    ------
    veil.errors.InputError
        When the folder cannot be created (see :func:`folder_problem`, or the system's reason).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with output_folder(d / "a" / "b") as out:
    ...     _ = (out / "x.txt").write_text("x")
    >>> (d / "a" / "b" / "x.txt").read_text()
    'x'
    >>> try:
    ...     with output_folder(d / "c" / "d") as out:
    ...         raise OSError("disk full")
    ... except OSError:
    ...     pass
    >>> sorted(p.name for p in d.iterdir())  # c (and c/d) created for the failed block: removed
    ['a']
    """
    target = Path(folder) if str(folder) else Path(".")
    check_folder(target, f"cannot create the output folder {target}")
    missing = []
    p = target
    while not p.is_dir() and p.parent != p:
        missing.append(p)
        p = p.parent
    created: Path | None = None
    try:
        for p in reversed(missing):  # top-most first; record only what this call made
            try:
                p.mkdir()
            except FileExistsError:
                if not p.is_dir():
                    raise
                continue
            created = created or p
    except OSError as exc:
        if created is not None:
            shutil.rmtree(created, ignore_errors=True)
        raise InputError(
            f"cannot create the output folder {target}: {exc.strerror or exc}"
        ) from None
    try:
        yield target
    except BaseException:
        if created is not None:
            shutil.rmtree(created, ignore_errors=True)
        raise
