"""DP-SGD accountants side by side: Veil's RDP (improved / classic) and PLD vs Opacus RDP / PRV.

Run in the benchmark environment (``.venv``, where Opacus is installed)::

    .venv/bin/python benchmarks/accountants.py           # ~1 min on 2 loaded cores
    .venv/bin/python benchmarks/accountants.py --quick   # skips the MNIST (14,062-step) row

Torch-free on Veil's side; Opacus's accountants (``opacus.accountants.RDPAccountant`` and
``PRVAccountant``; the latter's ``get_epsilon`` is an upper bound, about its estimate +
``eps_error = 0.01``, and the estimate and lower bound are printed too) run only when ``opacus``
is importable.  For each setting ``(q, sigma, steps)`` at ``delta = 1e-5`` it prints epsilon
and the wall time of each accountant:

* ``veil.dp.RDPAccountant`` with the improved conversion (Balle et al. 2020) and the classic
  one (Mironov 2017);
* ``veil.dp.PLDAccountant`` (pessimistic PLD, Koskela, Jalko & Honkela 2020) at its default
  grid width ``h = max(min(1e-3, 0.05 / steps), 1e-5)`` and at the finer ``h`` of the table in
  ``docs/dpsgd.md``;
* Opacus 1.6 RDP and PRV (Gopi, Lee & Wutschitz 2021).

Accountant values are deterministic; only the timings depend on the machine and its load.
Figures are recorded in ``docs/dpsgd.md`` (section "PLD accountant") and
``docs/benchmarks/dpsgd.md``.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import time
from collections.abc import Callable

from _timing import load_line  # benchmarks/_timing.py

from veil.dp import PLDAccountant, RDPAccountant

DELTA = 1e-5
# (label, sample rate q, noise multiplier sigma, steps, finer PLD grid width h)
SETTINGS: list[tuple[str, float, float, int, float]] = [
    ("0.01, 1.0, 1000", 0.01, 1.0, 1000, 2e-5),
    ("0.05, 2.0, 100", 0.05, 2.0, 100, 5e-5),
    ("0.004, 0.8, 3000", 0.004, 0.8, 3000, 0.02 / 3000),
    ("256/60000, 1.1, 14062 (MNIST)", 256 / 60000, 1.1, 14062, 5e-6),
]


def _timed(fn: Callable[[], float]) -> tuple[float, float]:
    """Return ``(epsilon, wall seconds)`` of one call."""
    t0 = time.perf_counter()
    eps = fn()
    return float(eps), time.perf_counter() - t0


def _veil(q: float, sigma: float, steps: int, h_fine: float) -> dict[str, tuple[float, float]]:
    out: dict[str, tuple[float, float]] = {}

    def rdp(method: str) -> float:
        acc = RDPAccountant(method=method)
        acc.step(noise_multiplier=sigma, sample_rate=q, steps=steps)
        return acc.get_epsilon(DELTA)

    def pld(h: float | None) -> float:
        acc = PLDAccountant(value_discretization=h)
        acc.step(noise_multiplier=sigma, sample_rate=q, steps=steps)
        return acc.get_epsilon(DELTA)

    out["veil RDP improved"] = _timed(lambda: rdp("improved"))
    out["veil RDP classic"] = _timed(lambda: rdp("classic"))
    h_default = max(min(1e-3, 0.05 / steps), 1e-5)
    out[f"veil PLD h={h_default:.2g} (default)"] = _timed(lambda: pld(None))
    out[f"veil PLD h={h_fine:.2g}"] = _timed(lambda: pld(h_fine))
    return out


def _opacus(q: float, sigma: float, steps: int) -> dict[str, tuple[float, float]]:
    try:
        from opacus.accountants import PRVAccountant
        from opacus.accountants import RDPAccountant as OpacusRDP
    except ImportError:
        return {}
    out: dict[str, tuple[float, float]] = {}

    def run(cls: type) -> float:
        acc = cls()
        acc.history = [(sigma, q, steps)]
        return acc.get_epsilon(delta=DELTA)

    out["opacus RDP"] = _timed(lambda: run(OpacusRDP))
    out["opacus PRV get_epsilon (upper)"] = _timed(lambda: run(PRVAccountant))
    # get_epsilon returns the upper bound eps(delta - delta_err) + eps_err; the estimate and
    # lower bound come from the same discretised PRV (private API, skipped if it moved).
    try:
        acc = PRVAccountant()
        acc.history = [(sigma, q, steps)]
        dprv = acc._get_dprv(eps_error=0.01, delta_error=DELTA / 1000)
        lower, estimate, _ = dprv.compute_epsilon(DELTA, DELTA / 1000, 0.01)
        out["opacus PRV estimate"] = (float(estimate), float("nan"))
        out["opacus PRV lower"] = (float(lower), float("nan"))
    except (AttributeError, TypeError):
        pass
    return out


def main() -> None:
    """Print epsilon and wall time per accountant for each setting."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the 14,062-step MNIST row")
    args = parser.parse_args()
    settings = SETTINGS[:-1] if args.quick else SETTINGS
    try:
        import opacus

        opacus_version = opacus.__version__
    except ImportError:
        opacus_version = "not installed"
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(
        f"# {now}; load {load_line()}; {platform.node()} {platform.machine()}, "
        f"{platform.python_version()}; opacus {opacus_version}; delta = {DELTA:g}"
    )
    for label, q, sigma, steps, h_fine in settings:
        print(f"\nq, sigma, steps = {label}")
        rows = {**_veil(q, sigma, steps, h_fine), **_opacus(q, sigma, steps)}
        for name, (eps, wall) in rows.items():
            took = "     (same run)" if wall != wall else f"{wall:8.3f} s"
            print(f"  {name:<32} eps = {eps:.3f}   {took}")
    print(f"\n# done; load {load_line()}")


if __name__ == "__main__":
    main()
