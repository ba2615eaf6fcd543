"""``veil anonymize INPUT --policy POLICY --out DIR``: apply a policy, write release + reports.

Nothing is written unless every step succeeds: the release, ``report.json``, ``report.html``
and operator artifacts are first written into a temporary folder inside ``DIR`` and then moved
into place one by one with ``os.replace``; the folders created for the run are removed on error.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from veil.cli._read_options import add_read_options, read_options


def _random_row_order(release: Any) -> Any:
    """``release`` with its rows in a random order drawn from the operating system's entropy.

    A k-anonymous release written in the input's row order is open to Sweeney's *unsorted
    matching attack* (Sweeney, "k-anonymity: a model for protecting privacy", 2002, section
    4): whoever knows the input's order (sorted by name, id or date; another release of the
    same input) links every record to its person by position.  The order is not drawn from
    the policy's seed, which may be known: a seeded order could be replayed.
    """
    import secrets

    import numpy as np

    rng = np.random.default_rng(secrets.randbits(128))
    return release.iloc[rng.permutation(len(release))]


def _seed(text: str) -> int:
    """``--seed``'s value as an int; argparse's own error would quote it, a key pasted there
    (``--seed $VEIL_KEY``) included."""
    from veil.deid._keys import shown

    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {shown(text)}") from None


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "anonymize",
        help="apply a policy: write the release, report.html and report.json",
        description="Apply a YAML policy to a table and write the release (same format as the "
        "input), report.html and report.json into DIR.",
        epilog="exit status: 0 release written (privacy targets met, or --allow-unmet); "
        "1 privacy targets not met (or unsatisfiable: no generalization meets them, which "
        "--allow-unmet cannot change), nothing written; 2 user error (bad input, policy, key or "
        "path), nothing written.",
    )
    p.add_argument("input", help="CSV, TSV or Parquet file")
    p.add_argument("--policy", required=True, help="policy YAML file (draft one with veil scan)")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (created if needed)")
    p.add_argument("--key-file", help="secret key file for pseudonymize/tokenize (else $VEIL_KEY)")
    p.add_argument(
        "--seed",
        type=_seed,
        help="seed for non-DP randomness (fake data, noise); anyone who knows it can replay "
        "that randomness (seeded noise can be subtracted), so leave it out of a release run",
    )
    p.add_argument(
        "--allow-unmet",
        action="store_true",
        help="write the release even when the privacy targets are not met (the report says "
        "NOT met); without it such a run writes nothing and exits 1",
    )
    add_read_options(p)
    p.set_defaults(func=run)


def _use_progress() -> bool:
    return sys.stderr.isatty() and not os.environ.get("CI") and os.environ.get("TERM") != "dumb"


@contextlib.contextmanager
def _progress() -> Iterator[Callable[[str, int, int], None] | None]:
    if not _use_progress():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description:<32}", markup=False),  # column names are not markup
        BarColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as prog:
        task = prog.add_task("reading", total=1)

        def tick(msg: str, done: int, total: int) -> None:
            prog.update(task, description=msg[:32], completed=done, total=total)

        yield tick


def _write_artifact(name: str, obj: Any, folder: Path) -> str:
    import pandas as pd

    from veil.io import write, write_json

    safe = Path(name).name
    if not safe or safe.startswith(".") or safe in ("report.json", "report.html"):
        safe = f"artifact_{abs(hash(name)) % 10**8}.json"
    if isinstance(obj, pd.DataFrame):
        if Path(safe).suffix.lower() not in (".csv", ".tsv", ".parquet", ".pq"):
            safe += ".csv"
        write(obj, folder / safe)
    else:
        if Path(safe).suffix.lower() != ".json":
            safe += ".json"
        write_json(obj, folder / safe)
    return safe


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _unmet_message(targets: dict[str, Any], algorithm: str | None) -> str:
    """One line naming every target that is not met, with its achieved value and the way out."""
    failed = []
    for name, verdict in targets.items():
        if not isinstance(verdict, dict) or verdict.get("met") is not False:
            continue
        target = verdict.get("target")
        if isinstance(target, dict):  # l / t: {column, l|t, ...}
            target = f"{_fmt(target.get(name))} on {target.get('column')}"
        achieved = verdict.get("achieved")
        note = verdict.get("note")
        got = note if achieved is None and note else f"achieved {_fmt(achieved)}"
        failed.append(f"{name}={_fmt(target)} {got}")
    if algorithm and targets.get("mode") == "enforced":
        hint = "the engine did not meet them"
    elif algorithm:
        hint = "the k-anonymity engine is not available to enforce them"
    else:
        hint = "set privacy.algorithm (e.g. mondrian) to enforce them"
    return (
        f"privacy targets not met: {'; '.join(failed)}; {hint}, "
        "or pass --allow-unmet to write anyway"
    )


def _previous_artifacts(out_dir: Path) -> list[str]:
    """Artifact files a previous run listed in ``out_dir/report.json`` (plain names only)."""
    import json

    try:
        listed = json.loads((out_dir / "report.json").read_text(encoding="utf-8"))["artifacts"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    if not isinstance(listed, list):
        return []
    return [a for a in listed if isinstance(a, str) and a == Path(a).name and a not in ("", ".")]


def _swap_in(staged: Path, out_dir: Path, names: list[str]) -> None:
    """Move the staged files into ``out_dir`` as one set.

    The previous run's files (its release, reports and the artifacts its report lists, such
    as a PCA basis or a column mapping, which must not outlive their release) are moved aside
    first; after a complete swap they are deleted.  If anything fails, an interrupt included,
    the new files are removed and the old ones put back; the aside folder is kept (and named
    in the error) if even that fails, so nothing of the previous run is lost.
    """
    old = Path(tempfile.mkdtemp(prefix=".veil-old-", dir=out_dir))
    previous = list(dict.fromkeys([*names, *_previous_artifacts(out_dir)]))
    aside: list[str] = []
    placed: list[str] = []
    try:
        for name in previous:
            if (out_dir / name).is_file():
                os.replace(out_dir / name, old / name)
                aside.append(name)
        for name in names:
            os.replace(staged / name, out_dir / name)
            placed.append(name)
    except BaseException as exc:
        restored = True
        for name in placed:
            with contextlib.suppress(OSError):
                os.unlink(out_dir / name)
        for name in aside:
            try:
                os.replace(old / name, out_dir / name)
            except OSError:
                restored = False
        if restored:
            shutil.rmtree(old, ignore_errors=True)
        else:
            exc.add_note(f"the previous run's files are kept in {old}")
        raise
    shutil.rmtree(old, ignore_errors=True)


def run(args: argparse.Namespace) -> int:
    from veil.deid import Policy, apply
    from veil.errors import InputError, UnsatisfiableError
    from veil.io import check_folder, output_folder, read_table, same_file, write, write_json
    from veil.report import render_html

    policy = Policy.from_yaml(args.policy)
    opts = {**policy.read_options(), **read_options(args)}
    inp = Path(args.input)
    if not str(args.out).strip():
        raise InputError("--out must name a folder (an empty path would mean the current one)")
    out_dir = Path(args.out)
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"--out must be a folder, but {out_dir} is a file")
    check_folder(out_dir, f"--out {out_dir}")  # checked now; created only when writing
    release_path = out_dir / inp.name
    if release_path.exists() and same_file(release_path, inp):
        raise InputError(
            f"refusing to write the release over its input {inp}: choose another --out"
        )
    if args.key_file is not None and not Path(args.key_file).is_file():
        from veil.deid._keys import KEY_PATH_HIDDEN, file_label
        from veil.errors import KeyMissingError

        label = file_label(Path(args.key_file))  # a key pasted as --key-file is not echoed
        raise KeyMissingError(
            f"key file not found: {label}" if label else f"key file not found; {KEY_PATH_HIDDEN}"
        )

    with _progress() as tick:
        if tick:
            tick("reading", 0, 1)
        df, fmt = read_table(inp, **opts)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = apply(df, policy, key_file=args.key_file, seed=args.seed, progress=tick)
            except UnsatisfiableError as exc:  # no release satisfies the targets: exit 1
                print(
                    f"veil: error: {exc}; nothing written (--allow-unmet cannot help: no "
                    "generalization meets these targets; lower them or raise "
                    "privacy.suppression_limit)",
                    file=sys.stderr,
                )
                return 1
        release, report = result
        targets = report.get("targets")
        if targets is not None and not targets["all_met"] and not args.allow_unmet:
            algorithm = policy.privacy.algorithm if policy.privacy is not None else None
            print(f"veil: error: {_unmet_message(targets, algorithm)}", file=sys.stderr)
            return 1
        report["input"]["file"] = inp.name
        report["release"]["file"] = release_path.name
        html = render_html(report)
        if policy.privacy is not None and policy.privacy.raw.get("row_order") == "random":
            release = _random_row_order(release)

    # output_folder: DIR and its missing parents are created only now, and all of those
    # removed again if anything below fails (the file outputs of the other commands too)
    with output_folder(out_dir):
        tmp = Path(tempfile.mkdtemp(prefix=".veil-", dir=out_dir))
        try:
            # the release keeps the input's layout: a headerless input gives a headerless
            # release even when names were given (they are in report.json); see docs/deid.md
            write(release, tmp / inp.name, like=fmt)
            artifacts = [_write_artifact(n, o, tmp) for n, o in result.artifacts.items()]
            report["artifacts"] = artifacts
            write_json(report, tmp / "report.json")
            (tmp / "report.html").write_text(html, encoding="utf-8")
            _swap_in(tmp, out_dir, [inp.name, *artifacts, "report.json", "report.html"])
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    before, after = report["risk"]["before"], report["risk"]["after"]
    print(
        f"release: {release_path} ({len(release)} of {len(df)} records, {release.shape[1]} columns)"
    )
    print(f"report:  {out_dir / 'report.html'} and {out_dir / 'report.json'}")
    print(
        f"unique on quasi-identifiers: {before['unique_share']:.1%} -> {after['unique_share']:.1%}; "
        f"smallest class {before['smallest_class']} -> {after['smallest_class']}"
    )
    if targets is not None:
        verdict = "met" if targets["all_met"] else "NOT met"
        print(f"privacy targets ({targets['mode']}): {verdict}")
    messages = list(report.get("warnings", []))
    messages += [str(w.message) for w in caught if str(w.message) not in messages]
    for msg in dict.fromkeys(messages):
        print(f"veil: warning: {msg}", file=sys.stderr)
    return 0
