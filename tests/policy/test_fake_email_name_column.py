"""A fake e-mail built from ``name_column`` never spells out a real name.

Operators run in the policy's order and read ``name_column`` as it is then: with the e-mail
column listed first, the name column dropped or not faked, every "fake" address was built
from the real name (``wanjiku.kamau@hotmail.com``), also in a release without the names.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from veil.deid import Policy, apply
from veil.errors import PolicyError

NAMES = ["Wanjiku Kamau", "Otieno Ochieng", "Achieng Atieno", "Mwangi Njoroge"]
EMAIL = {"role": "identifier", "operator": {"name": "fake", "kind": "email", "name_column": "name"}}
FAKE_NAME = {"role": "identifier", "operator": {"name": "fake", "kind": "name"}}


def _table() -> pd.DataFrame:
    return pd.DataFrame({"email": [f"p{i}@x.org" for i in range(4)], "name": NAMES})


def _spells_a_name(addresses: pd.Series) -> bool:
    parts = {p for n in NAMES for p in n.lower().split()}
    return any(set(re.split(r"[.@0-9]", a)) & parts for a in addresses)


@pytest.mark.parametrize(
    "columns",
    [
        {"email": EMAIL, "name": FAKE_NAME},  # e-mail listed before the name's fake
        {"email": EMAIL, "name": {"role": "identifier", "operator": "drop"}},
        {"name": {"role": "identifier", "operator": "drop"}, "email": EMAIL},
        {"email": EMAIL, "name": "insensitive"},
        {"name": {"role": "identifier", "operator": {"name": "mask"}}, "email": EMAIL},
    ],
    ids=["email-first", "name-dropped-after", "name-dropped-before", "name-kept", "name-masked"],
)
def test_addresses_never_spell_out_real_names(columns: dict[str, Any]) -> None:
    policy = {"columns": columns, "seed": 1}
    try:
        release, _ = apply(_table(), policy)
    except PolicyError as exc:  # refused, naming the setting (and no name)
        assert "name_column" in str(exc) and not _spells_a_name(pd.Series([str(exc)]))
        return
    assert not _spells_a_name(release["email"])


def test_the_documented_order_works_and_addresses_follow_the_fake_names() -> None:
    release, _ = apply(_table(), {"columns": {"name": FAKE_NAME, "email": EMAIL}, "seed": 1})
    assert not _spells_a_name(release["email"])
    for name, email in zip(release["name"], release["email"]):
        assert email.split("@")[0].startswith(name.lower().split()[0])


def test_yaml_error_points_at_the_line(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        "columns:\n"
        "  email: {role: identifier, operator: {name: fake, kind: email, name_column: name}}\n"
        "  name: {role: identifier, operator: {name: fake, kind: name}}\n"
    )
    with pytest.raises(PolicyError, match="line 2"):
        Policy.from_yaml(path)
