"""The shell examples of README.md and docs/*.md run as written and do what the text says.

Every shell command of the documentation is collected: the lines of ```bash / ```console /
```sh blocks, ``$ ...`` lines and ``veil ...`` / ``python ...`` lines of plain blocks (the
lines after a ``$`` line, up to the next one, are its documented output), and inline code spans
that start with ``veil SUBCOMMAND ARG``, ``python``, ``pip``, ``pytest`` or ``export``.  Each
must appear in :data:`CASES` -- run in a scratch folder with the bundled ``datasets/`` and
``examples/`` at hand, as a newcomer at the repository root would, or skipped with a reason --
so a new or changed example fails :func:`test_every_documented_command_is_covered` until it is
checked here.

Commands run in ``bash`` through the ``veil`` console script of the interpreter running the
tests (``python -m veil`` when the script is not installed).  Placeholders (``INPUT``,
``data.csv``, ``/secure/veil.key``) are replaced by a bundled file of the right shape; the
replacement is spelled out next to the command.  Expectations come from the documentation:
exit codes, files named in the text or comments, and the printed output where the
documentation shows it (compared line by line).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

import veil

ROOT = Path(__file__).resolve().parents[1]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
INSURANCE = "datasets/insurance_ke/Insurance_data_ke.csv"
ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "salary",
]  # fmt: skip
_FENCE = re.compile(r"^[ \t]*```([\w-]*)[ \t]*\n(.*?)^[ \t]*```[ \t]*$", re.S | re.M)
_SHELL_LANGS = {"bash", "console", "sh", "shell"}
_INLINE = re.compile(r"`([^`\n]+(?:\n[^`\n]+)?)`")
_INLINE_COMMAND = re.compile(r"^(veil [a-z]+ \S|python |pip |pytest|export )")


# --------------------------------------------------------------------------- extraction


@dataclass(frozen=True)
class DocCommand:
    """One shell command of the documentation."""

    where: str  # "docs/deid.md:196"
    text: str  # as a shell would run it: continuations joined, comment removed
    output: tuple[str, ...] = ()  # documented output (``$`` lines of plain blocks)

    @property
    def key(self) -> str:
        return " ".join(self.text.split())


def _strip_comment(line: str) -> str:
    """Remove a trailing ``# comment`` that is outside quotes and after whitespace."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def _logical_lines(body: str) -> list[str]:
    """Join backslash continuations."""
    lines, cur = [], ""
    for raw in body.splitlines():
        if raw.rstrip().endswith("\\"):
            cur += raw.rstrip()[:-1] + " "
        else:
            lines.append(cur + raw)
            cur = ""
    if cur:
        lines.append(cur)
    return lines


def _block_commands(lang: str, body: str, where: Callable[[int], str]) -> list[DocCommand]:
    """Commands of one fenced block (``where(i)`` names the i-th line of the block)."""
    found: list[DocCommand] = []
    lines = _logical_lines(body)
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        prompt = line.startswith("$ ")
        if lang in _SHELL_LANGS and lang != "console":
            is_command = bool(line) and not line.startswith("#")
        else:
            is_command = prompt or re.match(r"(veil|python) ", line) is not None
        if not is_command:
            i += 1
            continue
        output: list[str] = []
        j = i + 1
        if prompt:  # output: the following lines up to the next prompt
            while j < len(lines) and not lines[j].startswith("$ "):
                output.append(lines[j].rstrip())
                j += 1
            while output and not output[-1]:
                output.pop()
        text = _strip_comment(line[2:] if prompt else line)
        found.append(DocCommand(where(i), text, tuple(output)))
        i = j
    return found


def documented_commands() -> list[DocCommand]:
    """Every shell command of README.md and docs/*.md, in document order."""
    commands: list[DocCommand] = []
    for path in DOC_FILES:
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(ROOT).as_posix()
        for m in _FENCE.finditer(text):
            first = text[: m.start(2)].count("\n") + 1
            commands += _block_commands(
                m.group(1), m.group(2), lambda i, first=first, name=name: f"{name}:{first + i}"
            )
        prose = _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
        for m in _INLINE.finditer(prose):
            span = " ".join(m.group(1).split())
            if _INLINE_COMMAND.match(span):
                line = prose[: m.start()].count("\n") + 1
                commands.append(DocCommand(f"{name}:{line}", span))
    return commands


# --------------------------------------------------------------------------- scratch folder


def _write_adult_csv(root: Path) -> None:
    # as the README's k-anonymity example writes it
    adult = veil.read(root / "datasets/adult/adult.data", names=ADULT_COLUMNS).dropna()
    adult.to_csv(root / "adult.csv", index=False)


def _write_visits_csv(root: Path) -> None:
    # as the README's DP-queries example writes it
    import numpy as np

    rng = np.random.default_rng(0)
    visits = pd.DataFrame(
        {
            "person_id": rng.integers(0, 2000, 5000),
            "county": rng.choice(["north", "south"], 5000),
            "age": rng.integers(18, 90, 5000),
            "sex": rng.choice(["F", "M"], 5000),
        }
    )
    visits.to_csv(root / "visits.csv", index=False)


MEMBERS = pd.DataFrame(
    {"ssn": ["078-05-1120", "219-09-9999", "123-45-6789"], "member_id": [101, 102, 103]}
)


_TOKENIZE = {"role": "identifier", "operator": "tokenize"}


def _write_token_releases(root: Path) -> None:
    """``release.csv`` / ``.parquet``: ``ssn`` and ``member_id`` tokenized with ``veil.key``."""
    policy = {"version": 1, "columns": {"ssn": _TOKENIZE, "member_id": _TOKENIZE}}
    release, _ = veil.apply(MEMBERS, veil.Policy.from_dict(policy), key_file=root / "veil.key")
    release.to_csv(root / "release.csv", index=False)
    release.to_parquet(root / "release.parquet", index=False)


def _write_insurance_tokens(root: Path) -> None:
    """``tokens.csv``: the insurance table with its ``id`` tokenized with ``veil.key``."""
    policy = {"version": 1, "columns": {"id": _TOKENIZE}, "default_role": "insensitive"}
    insurance = veil.read(root / INSURANCE)
    release, _ = veil.apply(insurance, veil.Policy.from_dict(policy), key_file=root / "veil.key")
    release.to_csv(root / "tokens.csv", index=False)


def _write_keyed_policy(root: Path) -> None:
    """docs/deid.md's ``policy.yaml``: the Quickstart policy with ``id`` pseudonymized."""
    text = (root / "examples/insurance_ke.yaml").read_text(encoding="utf-8")
    drop = "id:               {role: identifier, operator: drop}"
    assert drop in text
    text = text.replace(drop, "id: {role: identifier, operator: pseudonymize}")
    (root / "policy.yaml").write_text(text, encoding="utf-8")


SETUPS: dict[str, Callable[[Path], None]] = {
    "adult.csv": _write_adult_csv,
    "visits.csv": _write_visits_csv,
    "token releases": _write_token_releases,
    "insurance tokens": _write_insurance_tokens,
    "policy.yaml": _write_keyed_policy,
}


@pytest.fixture()
def scratch(tmp_path: Path) -> Path:
    for name in ("datasets", "examples"):
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    (tmp_path / "hierarchies").symlink_to(ROOT / "examples/hierarchies", target_is_directory=True)
    shutil.copyfile(ROOT / INSURANCE, tmp_path / "data.csv")  # docs' `data.csv`
    (tmp_path / "secure").mkdir()
    key = secrets.token_hex(32)
    (tmp_path / "veil.key").write_text(key + "\n", encoding="utf-8")
    (tmp_path / "secure/veil.key").write_text(key + "\n", encoding="utf-8")
    bin_dir = tmp_path / ".bin"
    bin_dir.mkdir()
    script = Path(sys.executable).parent / "veil"
    veil_cmd = f'"{script}"' if script.exists() else f'"{sys.executable}" -m veil'
    for name, body in (("veil", veil_cmd), ("python", f'"{sys.executable}"')):
        wrapper = bin_dir / name
        wrapper.write_text(f'#!/bin/sh\nexec {body} "$@"\n', encoding="utf-8")
        wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return tmp_path


def _run(root: Path, command: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VEIL_")}
    env["PATH"] = f"{root / '.bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VEIL_KEY"] = (root / "veil.key").read_text(encoding="utf-8").strip()
    env["COLUMNS"] = "160"
    return subprocess.run(
        ["bash", "-c", command], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )


# --------------------------------------------------------------------------- the cases


@dataclass
class Case:
    """How a documented command is checked.

    ``runs``: ``(shell command, expected exit status)`` in order (default: the command as
    written, 0); ``setup``: keys of :data:`SETUPS`; ``files``: paths the command must create;
    ``stdout``: fragments its output must contain (whitespace-normalized); ``output_after``:
    ``(document, text)`` after which the next fenced block is the documented output of the first
    run; ``check``: a last check on the scratch folder; ``check_stdout``: a check of the first
    run's output; ``extra``: more checks of the same command (a slow test of its own);
    ``skip``: why it is not run.
    """

    runs: list[tuple[str, int]] | None = None
    setup: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    stdout: tuple[str, ...] = ()
    output_after: tuple[str, str] | None = None
    check: Callable[[Path], None] | None = None
    check_stdout: Callable[[str], None] | None = None
    slow: bool = False
    extra: Case | None = None
    skip: str = ""


def _is_release(folder: str, name: str) -> Callable[[Path], None]:
    def check(root: Path) -> None:
        for f in (name, "report.html", "report.json"):
            assert (root / folder / f).is_file(), f"{folder}/{f} missing"
        json.loads((root / folder / "report.json").read_text(encoding="utf-8"))

    return check


def _pseudonymized(root: Path) -> None:
    ids = pd.read_csv(root / "release/data.csv", dtype=str)["id"]
    assert ids.str.fullmatch(r"[0-9a-f]{20}").all()  # docs/operators.md: 20 hex characters


def _tokens_reversed(out: str, release: str, columns: list[str]) -> Callable[[Path], None]:
    def check(root: Path) -> None:
        path = root / out
        back = pd.read_parquet(path) if out.endswith(".parquet") else pd.read_csv(path)
        for col in columns:
            expected = MEMBERS[col] if col in MEMBERS else None
            assert expected is not None
            assert back[col].astype(str).tolist() == expected.astype(str).tolist()
        assert (root / release).exists()

    return check


def _ids_reversed(root: Path) -> None:
    back = pd.read_csv(root / "back.csv")
    assert back["id"].tolist() == sorted(back["id"].tolist())  # the original 0, 1, 2, ... ids
    assert pd.api.types.is_integer_dtype(back["id"])


def _keys_written(root: Path) -> None:
    public = json.loads((root / "keys/paillier_public.json").read_text(encoding="utf-8"))
    assert int(public["n"]).bit_length() == 3072
    mode = stat.S_IMODE((root / "keys/paillier_private.json").stat().st_mode)
    assert mode == 0o600  # docs/crypto.md: private key written with mode 0600


def _scan_json(stdout: str) -> None:
    found = json.loads(stdout)  # "machine-readable"
    assert [c["column"] for c in found["columns"]] == list(pd.read_csv(ROOT / INSURANCE, nrows=0))


def _draft_policy_parses(name: str) -> Callable[[Path], None]:
    def check(root: Path) -> None:
        veil.Policy.from_yaml(root / name)

    return check


QUICKSTART = f"veil anonymize {INSURANCE} --policy examples/insurance_ke.yaml --out release/"
KEYGEN = "veil crypto keygen --bits 3072 --out keys/"
EXPORT_KEY = "export VEIL_KEY=$(python -c 'import secrets; print(secrets.token_hex(32))')"
QUERY_SQL = (
    "\"SELECT county, COUNT(*), AVG(age) FROM data WHERE age > 20 AND sex = 'F' GROUP BY county\""
)
ADULT_CHECK = "veil check adult.csv --qi age,sex,race --k 5 --l salary:2 --t occupation:0.2"
INSURANCE_NAMES = (
    "id,County,Gender,Marital_status,No_of_dependents,Age,Tier,Policy_limit,Illness_category,"
    "Date_of_entry,Updated_subscription,Account_withdrawal,Retention"
)

CASES: dict[str, Case] = {
    # README Quickstart: the install is what .ci/run does; the veil part runs here
    "python -m venv .venv && . .venv/bin/activate && pip install . && " + QUICKSTART: Case(
        runs=[(QUICKSTART, 0)],
        check=_is_release("release", "Insurance_data_ke.csv"),
        output_after=("docs/deid.md", "and prints a summary:"),
    ),
    'python -m venv .venv && . .venv/bin/activate && pip install torch==2.13.0 && pip install -e ".[test,torch]" && pytest -n 2': Case(
        skip="installs and runs the whole test suite: what .ci/run does"
    ),
    "pytest -m slow": Case(skip="runs the slow tests"),
    "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu": Case(
        skip="network install"
    ),
    'pip install ".[torch]"': Case(skip="install of the optional extra (.ci/run installs it)"),
    'pip install -e ".[bench]"': Case(skip="benchmark environment"),
    "python benchmarks/<area>.py": Case(skip="benchmarks run for minutes"),
    "python benchmarks/deid.py --scan": Case(skip="benchmarks run for minutes"),
    # README CLI tour
    f"veil scan {INSURANCE} --policy-out draft.yaml": Case(
        files=("draft.yaml",), check=_draft_policy_parses("draft.yaml")
    ),
    "veil anonymize INPUT --policy POLICY --out DIR [--key-file F] [--seed N]": Case(
        runs=[
            (
                f"veil anonymize {INSURANCE} --policy examples/insurance_ke.yaml --out DIR "
                "--key-file veil.key --seed 7",
                0,
            ),
        ],
        check=_is_release("DIR", "Insurance_data_ke.csv"),
        slow=True,
    ),
    "veil reidentify RELEASE --columns id --out FILE --key-file F": Case(
        runs=[("veil reidentify tokens.csv --columns id --out back.csv --key-file veil.key", 0)],
        setup=("insurance tokens",),
        check=_ids_reversed,
    ),
    "veil check INPUT --qi Age,County,Gender --k 5 --l Illness_category:2 --t Illness_category:0.2": Case(
        runs=[
            (
                f"veil check {INSURANCE} --qi Age,County,Gender --k 5 --l Illness_category:2 "
                "--t Illness_category:0.2",
                1,
            ),
        ],  # the raw table is not 5-anonymous: exit 1 (README: 1 when a model does not hold)
        stdout=("k-anonymity(k=5)", "distinct-l-diversity", "t-closeness"),
    ),
    'veil query INPUT "SELECT County, COUNT(*), AVG(Age) FROM data GROUP BY County" --delta 1e-6 --epsilon 1 --bounds Age=18:100 [--privacy-unit id]': Case(
        runs=[
            (
                f'veil query {INSURANCE} "SELECT County, COUNT(*), AVG(Age) FROM data GROUP BY '
                'County" --delta 1e-6 --epsilon 1 --bounds Age=18:100 --privacy-unit id',
                0,
            ),
        ],
        stdout=("privacy unit: id", "avg_Age"),
    ),
    KEYGEN: Case(
        # docs/crypto.md: refuses to overwrite without --force
        runs=[(KEYGEN, 0), (KEYGEN, 2)],
        files=("keys/paillier_public.json", "keys/paillier_private.json"),
        check=_keys_written,
        extra=Case(runs=[(KEYGEN, 0), (KEYGEN + " --force", 0)], check=_keys_written),
    ),
    # README k-anonymity and DP-query sections (files written by the README's Python blocks)
    ADULT_CHECK: Case(runs=[(ADULT_CHECK, 1)], setup=("adult.csv",)),  # exit 1: does not hold
    'veil query visits.csv "SELECT county, COUNT(*), AVG(age) FROM data WHERE age > 20 GROUP BY county" --epsilon 1 --delta 1e-6 --privacy-unit person_id --bounds age=18:100': Case(
        setup=("visits.csv",), stdout=("privacy unit: person_id", "±")
    ),
    "veil reidentify release.csv --columns ssn --out back.csv --key-env VEIL_KEY": Case(
        setup=("token releases",),
        check=_tokens_reversed("back.csv", "release.csv", ["ssn"]),
        slow=True,  # docs/operators.md's first example does the same with two columns
    ),
    EXPORT_KEY: Case(runs=[(EXPORT_KEY + ' && test "${#VEIL_KEY}" -eq 64', 0)]),
    # docs/anonymity.md
    ADULT_CHECK + " --show 3": Case(runs=[(ADULT_CHECK + " --show 3", 1)], setup=("adult.csv",)),
    # docs/crypto.md
    "veil crypto keygen": Case(skip="names the command"),
    # docs/deid.md
    f"veil scan {INSURANCE} --policy-out policy.yaml": Case(
        files=("policy.yaml",),
        check=_draft_policy_parses("policy.yaml"),
        slow=True,  # the README's tour runs the same scan
    ),
    QUICKSTART: Case(
        check=_is_release("release", "Insurance_data_ke.csv"),
        slow=True,  # the README's Quickstart runs the same command
    ),
    "veil scan X --policy-out p.yaml && veil anonymize X --policy p.yaml --out d": Case(
        # "enforces k (and l) on the insurance table and on headerless Adult"
        runs=[
            (
                f"veil scan {INSURANCE} --policy-out p.yaml && "
                f"veil anonymize {INSURANCE} --policy p.yaml --out d",
                0,
            ),
            (
                "veil scan datasets/adult/adult.data --policy-out pa.yaml && "
                "veil anonymize datasets/adult/adult.data --policy pa.yaml --out da",
                0,
            ),
        ],
        stdout=("privacy targets (enforced): met",),
        check=_is_release("da", "adult.data"),
        slow=True,
    ),
    "veil scan --policy-out": Case(skip="names an option"),
    "veil scan data.csv": Case(stdout=("Quasi-identifiers:",), slow=True),
    "veil scan data.csv --json": Case(check_stdout=_scan_json, slow=True),
    "veil scan data.csv --policy-out p.yaml": Case(
        files=("p.yaml",), check=_draft_policy_parses("p.yaml"), slow=True
    ),
    "veil anonymize INPUT --policy POLICY --out DIR [--key-file F] [--seed N] [--delimiter D] [--encoding E] [--missing TEXT ...] [--names a,b,c] [--allow-unmet]": Case(
        # every option, on a headerless copy of the insurance table
        runs=[
            (
                f"tail -n +2 {INSURANCE} > noheader.csv && veil anonymize noheader.csv --policy "
                "examples/insurance_ke.yaml --out DIR --key-file veil.key --seed 7 --delimiter , "
                f"--encoding utf-8 --missing NA --names {INSURANCE_NAMES} --allow-unmet",
                0,
            ),
        ],
        check=lambda root: (
            _is_release("DIR", "noheader.csv")(root) or _headerless(root / "DIR/noheader.csv")
        ),
        slow=True,
    ),
    "veil anonymize --help": Case(stdout=("exit status: 0", "1", "2 user error")),
    "veil anonymize data.csv --policy policy.yaml --out release/": Case(
        runs=[(EXPORT_KEY + " && veil anonymize data.csv --policy policy.yaml --out release/", 0)],
        setup=("policy.yaml",),
        check=_pseudonymized,
        slow=True,
    ),
    "veil anonymize data.csv --policy policy.yaml --out release/ --key-file /secure/veil.key": Case(
        runs=[
            (
                "unset VEIL_KEY && veil anonymize data.csv --policy policy.yaml --out release/ "
                "--key-file secure/veil.key",
                0,
            ),
        ],
        setup=("policy.yaml",),
        check=_pseudonymized,
        slow=True,
    ),
    "veil anonymize adult1m.csv --policy p1m.yaml --out o1m --allow-unmet": Case(
        skip="benchmark on a 1M-row table built in the text"
    ),
    # docs/dp_queries.md synopsis: every option but --dry-run (--group-size goes with it)
    "veil query INPUT "
    + QUERY_SQL
    + " --epsilon 1 [--delta 1e-6] [--privacy-unit person_id] [--bounds age=18:100 ...] [--max-groups N] [--max-rows N] [--keys county=north,south ...] [--mechanism gaussian] [--alpha 0.05] [--dry-run [--group-size 500]] [--out result.csv] [--missing n/a]": Case(
        runs=[
            (
                f"veil query visits.csv {QUERY_SQL} --epsilon 1 --delta 1e-6 --privacy-unit "
                "person_id --bounds age=18:100 --max-groups 1 --max-rows 1 --keys county=north,south "
                "--mechanism gaussian --alpha 0.05 --out result.csv --missing n/a",
                0,
            ),
        ],
        setup=("visits.csv",),
        files=("result.csv",),
        stdout=("privacy unit: person_id", "±"),
        extra=Case(
            runs=[
                (
                    f"veil query visits.csv {QUERY_SQL} --epsilon 1 --delta 1e-6 --privacy-unit "
                    "person_id --bounds age=18:100 --dry-run --group-size 500 --out result.csv",
                    0,
                ),
            ],
            setup=("visits.csv",),
            # "prints the budget split and accuracy without releasing anything"
            check=lambda root: _nothing_at(root / "result.csv"),
        ),
    ),
    # docs/loo_attack.md
    "python examples/loo_attack.py [--out DIR] [--runs 1000] [--epsilon 1] [--seed N]": Case(
        runs=[("python examples/loo_attack.py --out DIR --runs 1000 --epsilon 1 --seed 1", 0)],
        files=("DIR/loo_attack_rmse.png", "DIR/loo_attack_reconstruction.png"),
        slow=True,
    ),
    # docs/operators.md
    "veil reidentify release.csv --columns ssn,member_id --out reidentified.csv --key-env VEIL_KEY": Case(
        setup=("token releases",),
        check=_tokens_reversed("reidentified.csv", "release.csv", ["ssn", "member_id"]),
    ),
    "veil reidentify release.parquet --columns ssn --out back.parquet --key-file veil.key": Case(
        setup=("token releases",),
        check=_tokens_reversed("back.parquet", "release.parquet", ["ssn"]),
        slow=True,
    ),
}


def _nothing_at(path: Path) -> None:
    assert not path.exists(), f"{path.name} written"


def _headerless(path: Path) -> None:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert not first.startswith("id,") and "County" not in first


# --------------------------------------------------------------------------- tests


def test_every_documented_command_is_covered() -> None:
    commands = documented_commands()
    assert len(commands) >= 30  # the extraction finds the examples
    missing = sorted({f"{c.where}: {c.key}" for c in commands if c.key not in CASES})
    assert not missing, (
        "shell examples of the docs not checked by tests/test_docs_cli.py (add them to CASES):\n"
        + "\n".join(missing)
    )
    stale = sorted(set(CASES) - {c.key for c in commands})
    assert not stale, "CASES for commands no longer in the docs:\n" + "\n".join(stale)


def _documented_output(case: Case, command: DocCommand) -> list[str] | None:
    if command.output:
        return list(command.output)
    if case.output_after is None:
        return None
    doc, anchor = case.output_after
    text = (ROOT / doc).read_text(encoding="utf-8")
    start = text.index(anchor)
    block = _FENCE.search(text, start)
    assert block is not None
    return block.group(2).rstrip("\n").splitlines()


def _params() -> list[object]:
    seen: dict[str, DocCommand] = {}
    for c in documented_commands():
        seen.setdefault(c.key, c)
    params = []
    for key, command in seen.items():
        case = CASES.get(key)
        if case is None or case.skip:
            continue
        marks = [pytest.mark.slow] if case.slow else []
        params.append(pytest.param(command, case, id=command.where, marks=marks))
        if case.extra is not None:
            params.append(
                pytest.param(
                    command, case.extra, id=command.where + "-more", marks=[pytest.mark.slow]
                )
            )
    return params


@pytest.mark.parametrize(("command", "case"), _params())
def test_documented_command_runs(scratch: Path, command: DocCommand, case: Case) -> None:
    for name in case.setup:
        SETUPS[name](scratch)
    runs = case.runs or [(command.text, 0)]
    outputs = []
    for shell, expected_rc in runs:
        proc = _run(scratch, shell)
        assert proc.returncode == expected_rc, (
            f"{command.where}: `{shell}` exited {proc.returncode}, expected {expected_rc}\n"
            f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
        if expected_rc == 2:  # user errors: one line on stderr
            assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        outputs.append(proc.stdout)
    flat = [" ".join(out.split()) for out in outputs]
    for fragment in case.stdout:
        assert any(fragment in out for out in flat), f"{command.where}: no {fragment!r}"
    if case.check_stdout is not None:
        case.check_stdout(outputs[0])
    documented = _documented_output(case, command)
    if documented is not None:
        assert outputs[0].rstrip("\n").splitlines() == documented
    for name in case.files:
        assert (scratch / name).is_file(), f"{command.where}: {name} not written"
    if case.check is not None:
        case.check(scratch)
