"""Benchmark: Veil secret sharing and Paillier against phe 1.5 (+gmpy2), in one run.

Measures, with 2048-bit keys (``--bits``):

* scalar encryptions/s, decryptions/s and ciphertext additions/s, Veil vs phe;
* the vector task: three parties encrypt a 100,000-float vector each, an aggregator adds the
  ciphertexts, the key holder decrypts the sum.  Veil packs 35 fixed-point values per
  ciphertext; phe encrypts each value separately and is measured on a subsample of
  ``--phe-sample`` values, then extrapolated linearly to the full vector (every phe step is
  per value, so its cost is linear in the vector length).  Veil's decrypted sum is asserted
  exact to the fixed-point resolution;
* Shamir 3-of-5 share + reconstruct of a 1,000,000-element float vector (target <= 1 s).

Run: ``.venv/bin/python benchmarks/crypto.py`` (about 1-2 minutes) or ``--quick`` (~30 s).
Needs phe (``pip install phe``) for the side-by-side figures; without it only Veil runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from typing import Any

import numpy as np

from veil.crypto import shamir_reconstruct, shamir_share
from veil.crypto.paillier import PackingSpec, aggregate, dumps, generate_paillier_keypair, loads

try:
    import phe
    import phe.util
except ImportError:  # pragma: no cover
    phe = None


def scalar_bench(bits: int, n: int, rounds: int = 5) -> dict[str, Any]:
    """Scalar rates; Veil and phe are measured in alternating rounds (median of ``rounds``)
    so that load changes on a shared machine affect both alike."""
    out: dict[str, Any] = {}
    pk, sk = generate_paillier_keypair(n_length=bits)
    t = time.perf_counter()
    pk.precompute()  # one-off fixed-base table, reported separately
    out["veil_precompute_s"] = time.perf_counter() - t
    libs: dict[str, tuple[Any, Any]] = {"veil": (pk, sk)}
    if phe is not None:
        libs["phe"] = phe.paillier.generate_paillier_keypair(n_length=bits)
    k = max(n // rounds, 1)
    rates: dict[str, list[float]] = {}
    for r in range(rounds):
        values = list(range(r * k + 1, (r + 1) * k + 1))
        for name, (pub, priv) in libs.items():
            t0 = time.perf_counter()
            encs = [pub.encrypt(v) for v in values]
            t1 = time.perf_counter()
            for e in encs:
                priv.decrypt(e)
            t2 = time.perf_counter()
            pairs = [(encs[i % k], encs[(i + 1) % k]) for i in range(20 * k)]
            t3 = time.perf_counter()
            for a, b in pairs:
                a + b
            t4 = time.perf_counter()
            rates.setdefault(f"{name}_enc_per_s", []).append(k / (t1 - t0))
            rates.setdefault(f"{name}_dec_per_s", []).append(k / (t2 - t1))
            rates.setdefault(f"{name}_add_per_s", []).append(20 * k / (t4 - t3))
    out.update({key: statistics.median(v) for key, v in rates.items()})
    return out


def vector_bench(bits: int, size: int, phe_sample: int, parties: int = 3) -> dict[str, Any]:
    out: dict[str, Any] = {"size": size, "parties": parties}
    rng = np.random.default_rng(12345)  # simulated data only; encryption randomness is secure
    vectors = [rng.normal(0.0, 10.0, size=size) for _ in range(parties)]
    truth = np.sum(vectors, axis=0)
    pk, sk = generate_paillier_keypair(n_length=bits)
    spec = PackingSpec(frac_bits=32, int_bits=20, max_parties=16)
    party_keys = [loads(dumps(pk)) for _ in range(parties)]  # each party builds its own table
    c0 = time.process_time()
    t0 = time.perf_counter()
    encrypted = [k.encrypt_vector(v, spec) for k, v in zip(party_keys, vectors)]
    t1 = time.perf_counter()
    total = aggregate(encrypted, pk)
    t2 = time.perf_counter()
    decrypted = sk.decrypt_vector(total)
    t3 = time.perf_counter()
    veil_cpu = time.process_time() - c0
    err = float(np.max(np.abs(decrypted - truth)))
    tol = parties * 2.0 ** -(spec.frac_bits + 1) + 4 * np.finfo(float).eps * float(
        np.max(np.abs(truth))
    )
    assert err <= tol, f"Veil vector sum off by {err} > {tol}"
    out.update(
        veil_encrypt_s=t1 - t0,
        veil_add_s=t2 - t1,
        veil_decrypt_s=t3 - t2,
        veil_total_s=t3 - t0,
        veil_total_cpu_s=veil_cpu,
        veil_ciphertexts_per_party=len(encrypted[0].ciphertexts),
        veil_slots=spec.slots(bits),
        veil_max_abs_error=err,
        veil_error_bound=tol,
    )
    if phe is not None:
        m = min(phe_sample, size)
        ppk, psk = phe.paillier.generate_paillier_keypair(n_length=bits)
        sub = [v[:m] for v in vectors]
        c0 = time.process_time()
        t0 = time.perf_counter()
        penc = [[ppk.encrypt(float(x)) for x in v] for v in sub]
        t1 = time.perf_counter()
        psum = penc[0]
        for other in penc[1:]:
            psum = [a + b for a, b in zip(psum, other)]
        t2 = time.perf_counter()
        pdec = np.array([psk.decrypt(e) for e in psum])
        t3 = time.perf_counter()
        phe_cpu = time.process_time() - c0
        scale = size / m
        out.update(
            phe_sample=m,
            phe_encrypt_s=(t1 - t0) * scale,
            phe_add_s=(t2 - t1) * scale,
            phe_decrypt_s=(t3 - t2) * scale,
            phe_total_s=(t3 - t0) * scale,
            phe_total_cpu_s=phe_cpu * scale,
            phe_max_abs_error=float(np.max(np.abs(pdec - truth[:m]))),
        )
        out["speedup"] = out["phe_total_s"] / out["veil_total_s"]
        out["speedup_cpu"] = out["phe_total_cpu_s"] / out["veil_total_cpu_s"]
    return out


def shamir_bench(size: int, repeats: int) -> dict[str, Any]:
    x = np.random.default_rng(1).normal(size=size)
    share_t, rec_t, cpu_t = [], [], []
    for _ in range(repeats):
        c0 = time.process_time()
        t0 = time.perf_counter()
        shares = shamir_share(x, 3, 5, frac_bits=24)
        t1 = time.perf_counter()
        y = shamir_reconstruct([shares[4], shares[0], shares[2]])
        t2 = time.perf_counter()
        cpu_t.append(time.process_time() - c0)
        share_t.append(t1 - t0)
        rec_t.append(t2 - t1)
    assert np.max(np.abs(y - x)) <= 2.0**-25
    return {
        "size": size,
        "share_s": statistics.median(share_t),
        "reconstruct_s": statistics.median(rec_t),
        "total_s": statistics.median([a + b for a, b in zip(share_t, rec_t)]),
        "total_cpu_s": statistics.median(cpu_t),
    }


def _markdown(res: dict[str, Any]) -> str:
    s, v, sh = res["scalar"], res["vector"], res["shamir"]

    def ratio(a: str, b: str, d: dict[str, Any]) -> str:
        return f"{d[a] / d[b]:.1f}x" if b in d else "n/a"

    lines = [
        f"| metric ({res['bits']}-bit keys) | Veil | phe | Veil / phe |",
        "|---|---:|---:|---:|",
    ]
    for name, key in (("encryptions/s", "enc"), ("decryptions/s", "dec"), ("additions/s", "add")):
        lines.append(
            f"| scalar {name} | {s[f'veil_{key}_per_s']:,.0f} | "
            f"{s.get(f'phe_{key}_per_s', float('nan')):,.0f} | "
            f"{ratio(f'veil_{key}_per_s', f'phe_{key}_per_s', s)} |"
        )
    for step in ("encrypt", "add", "decrypt", "total"):
        phe_val = v.get(f"phe_{step}_s", float("nan"))
        lines.append(
            f"| {v['size']:,}-float vector, {v['parties']} parties: {step} (s) | "
            f"{v[f'veil_{step}_s']:.2f} | {phe_val:.1f} | "
            f"{(phe_val / v[f'veil_{step}_s']):.0f}x faster |"
        )
    if "phe_total_cpu_s" in v:
        lines.append(
            f"| vector task, CPU time (s) | {v['veil_total_cpu_s']:.2f} | "
            f"{v['phe_total_cpu_s']:.1f} | {v['speedup_cpu']:.0f}x faster |"
        )
    lines.append(
        f"| Shamir 3-of-5, {sh['size']:,} floats: share + reconstruct (s) | "
        f"{sh['total_s']:.3f} ({sh['share_s']:.3f} + {sh['reconstruct_s']:.3f}); "
        f"CPU {sh['total_cpu_s']:.3f} | - | - |"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="~30 s smoke run")
    parser.add_argument("--bits", type=int, default=2048)
    parser.add_argument("--size", type=int, default=100_000, help="vector length")
    parser.add_argument("--phe-sample", type=int, default=600, help="phe values measured")
    parser.add_argument("--scalar-n", type=int, default=300, help="scalar operations measured")
    parser.add_argument("--json", help="also write the raw figures to this file")
    args = parser.parse_args(argv)
    if args.quick:
        args.size, args.phe_sample, args.scalar_n = 10_000, 60, 60
    res: dict[str, Any] = {
        "bits": args.bits,
        "python": platform.python_version(),
        "phe": getattr(phe, "__version__", None),
        "phe_gmpy2": bool(getattr(getattr(phe, "util", None), "HAVE_GMP", False)),
        "loadavg_before": os.getloadavg(),
    }
    res["scalar"] = scalar_bench(args.bits, args.scalar_n)
    res["vector"] = vector_bench(args.bits, args.size, args.phe_sample)
    res["shamir"] = shamir_bench(100_000 if args.quick else 1_000_000, 3)
    res["loadavg_after"] = os.getloadavg()
    print(_markdown(res))
    print(json.dumps(res, indent=1, default=float))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(res, fh, indent=1, default=float)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
