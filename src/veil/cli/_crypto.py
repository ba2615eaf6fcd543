"""``veil crypto``: key management for Paillier secure aggregation.

``veil crypto keygen --bits 3072 --out DIR`` writes ``DIR/paillier_public.json`` (share it
with the parties) and ``DIR/paillier_private.json`` (mode 0600, keep it with the key holder).
Files are written atomically (temporary file in the same directory, fsync, rename) and never
overwritten unless ``--force`` is given.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
import tempfile
import warnings
from pathlib import Path

from veil.errors import ConfigError


def _atomic_write(path: Path, text: str, mode: int, force: bool) -> None:
    """Write ``text`` to ``path`` atomically with permissions ``mode``.

    Without ``force`` the file is put in place with :func:`os.link`, which fails if ``path``
    exists at that moment (also a file created after the early check, or a dangling symlink,
    which :meth:`Path.exists` does not see): an existing key is never replaced unasked.
    """
    if os.path.lexists(path) and not force:
        raise ConfigError(f"{path} already exists (use --force to overwrite)")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if force:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)  # atomic, and refuses an existing name
            except FileExistsError:
                raise ConfigError(f"{path} already exists (use --force to overwrite)") from None
            except OSError as exc:  # a file system without hard links: check, then rename
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
                    raise
                if os.path.lexists(path):
                    raise ConfigError(f"{path} already exists (use --force to overwrite)") from None
                os.replace(tmp, path)
            else:
                os.unlink(tmp)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _keygen(args: argparse.Namespace) -> int:
    from veil.crypto.paillier import InsecureKeyWarning, dumps, generate_paillier_keypair
    from veil.io import check_folder, output_folder

    if args.bits < 2048 and not args.insecure:
        raise ConfigError(
            f"--bits {args.bits} is below 2048: such keys are breakable; pass --insecure for "
            "tests and demonstrations only (3072 recommended)"
        )
    if not str(args.out).strip():
        raise ConfigError("--out must name a folder (an empty path would mean the current one)")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} exists and is not a directory")
    # a missing folder is created after the key is made
    check_folder(out, f"--out {out}", ConfigError)
    for name in ("paillier_private.json", "paillier_public.json"):
        if os.path.lexists(out / name) and not args.force:
            raise ConfigError(f"{out / name} already exists (use --force to overwrite)")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", InsecureKeyWarning)
        public_key, private_key = generate_paillier_keypair(
            n_length=args.bits, insecure=args.insecure
        )
    for w in caught:
        print(f"veil: warning: {w.message}", file=sys.stderr)
    # created only now (a refused --bits leaves no folder), with its missing parents, and
    # removed again if a write fails (the folders of the other commands' outputs likewise)
    with output_folder(out):
        # the public key first: a failure in between leaves a harmless public key, never a
        # private key whose pair is incomplete
        _atomic_write(out / "paillier_public.json", dumps(public_key), 0o644, args.force)
        _atomic_write(out / "paillier_private.json", dumps(private_key), 0o600, args.force)
    print(
        f"wrote {out / 'paillier_public.json'} and {out / 'paillier_private.json'} "
        f"({args.bits}-bit key {public_key.fingerprint})"
    )
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``crypto`` command (sub-command ``keygen``)."""
    parser = subparsers.add_parser("crypto", help="Paillier key management")
    sub = parser.add_subparsers(dest="crypto_command", metavar="ACTION", required=True)
    keygen = sub.add_parser("keygen", help="generate a Paillier key pair")
    keygen.add_argument("--bits", type=int, default=3072, help="modulus length (default 3072)")
    keygen.add_argument("--out", required=True, help="output directory")
    keygen.add_argument("--insecure", action="store_true", help="allow keys below 2048 bits")
    keygen.add_argument("--force", action="store_true", help="overwrite existing key files")
    keygen.set_defaults(func=_keygen)
