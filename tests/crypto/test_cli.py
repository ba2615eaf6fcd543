"""``veil crypto keygen``."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from veil.cli.main import main
from veil.crypto.paillier import PaillierPrivateKey, PaillierPublicKey, loads


def test_keygen_writes_keys_with_private_permissions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "keys"
    assert main(["crypto", "keygen", "--bits", "512", "--insecure", "--out", str(out)]) == 0
    pub = loads((out / "paillier_public.json").read_text(), insecure=True)
    priv = loads((out / "paillier_private.json").read_text(), insecure=True)
    assert isinstance(pub, PaillierPublicKey) and isinstance(priv, PaillierPrivateKey)
    assert priv.public_key == pub and pub.n_length == 512
    assert stat.S_IMODE((out / "paillier_private.json").stat().st_mode) == 0o600
    assert str(priv.p) not in capsys.readouterr().out
    # no overwrite without --force: one-line error, exit 2
    assert main(["crypto", "keygen", "--bits", "512", "--insecure", "--out", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert loads((out / "paillier_private.json").read_text(), insecure=True) == priv
    assert sorted(p.name for p in out.iterdir()) == [
        "paillier_private.json",
        "paillier_public.json",
    ]


def test_keygen_refuses_short_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crypto", "keygen", "--bits", "512", "--out", str(tmp_path)]) == 2
    assert "insecure" in capsys.readouterr().err


def test_keygen_1024_bits_needs_the_insecure_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the CLI refuses keys below 2048 bits without --insecure (the Python API only warns, so
    # that generate_paillier_keypair(n_length=1024) from the seed material runs unchanged)
    assert main(["crypto", "keygen", "--bits", "1024", "--out", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert "--insecure" in err and err.count("\n") == 1
    assert not (tmp_path / "a").exists()
    assert (
        main(["crypto", "keygen", "--bits", "1024", "--insecure", "--out", str(tmp_path / "b")])
        == 0
    )


@pytest.mark.parametrize("bits", ["0", "-8", "17"])
def test_keygen_refused_bits_leave_no_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bits: str
) -> None:
    out = tmp_path / "keys"
    assert main(["crypto", "keygen", "--bits", bits, "--insecure", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("veil: error:") and "\n" not in err
    assert not out.exists()


def test_keygen_never_replaces_a_key_written_after_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # another keygen (or a person) puts a private key in place while this one is writing:
    # without --force it must stay, not be renamed over (the early exists() check is not enough)
    import os

    out = tmp_path / "keys"
    out.mkdir()
    theirs = out / "paillier_private.json"
    real_fsync = os.fsync

    def fsync_then_race(fd: int) -> None:
        real_fsync(fd)
        if (out / "paillier_public.json").exists() and not theirs.exists():
            theirs.write_text("someone else's key")

    monkeypatch.setattr(os, "fsync", fsync_then_race)
    assert main(["crypto", "keygen", "--bits", "512", "--insecure", "--out", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert theirs.read_text() == "someone else's key"
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]  # no temp file left


def test_keygen_does_not_replace_a_dangling_symlink(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a key file symlinked to a volume that is not mounted yet: Path.exists() is False, but
    # the name is taken and replacing it without --force would lose the link
    out = tmp_path / "keys"
    out.mkdir()
    link = out / "paillier_private.json"
    link.symlink_to(tmp_path / "vault" / "paillier_private.json")
    assert main(["crypto", "keygen", "--bits", "512", "--insecure", "--out", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert link.is_symlink()
    assert (
        main(["crypto", "keygen", "--bits", "512", "--insecure", "--out", str(out), "--force"]) == 0
    )
    assert not link.is_symlink() and stat.S_IMODE(link.stat().st_mode) == 0o600
