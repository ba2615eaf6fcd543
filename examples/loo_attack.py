"""The leave-one-out attack on released means, done right.

A research platform holds the heights of the 60 participants of OpenNeuro ds004148 and
answers "average height" queries.  It publishes the mean and, for every participant, the mean
of everybody *else* (leave-one-out, LOO).  This script shows three release schemes, attacked by
the same adversary, over a Monte Carlo of 1,000 releases:

(a) **exact** LOO means: ``x_i = n * mean - (n - 1) * loo_i`` reconstructs every height exactly;
(b) **ad hoc noise** scaled to the spread of the LOO means (each release gets fresh noise with
    standard deviation equal to the standard deviation of the LOO means): one release looks
    safe, but the attacker averages repeated releases and the error collapses as ``1/sqrt(k)``;
(c) **differential privacy**: every mean query (full and LOO) is a Laplace mechanism with the
    bounds 140-200 cm and is charged to one :class:`veil.dp.BudgetAccountant` (total
    ``epsilon = 1`` for the platform's lifetime, split over all 1,000 releases).  Averaging
    cannot beat the budget: the attacker's error stays at the population standard deviation,
    i.e. no better than guessing the mean.

The adversary knows ``n``, the population mean and spread (generous: public statistics) and
the noise variance (public in DP; estimated from the releases in the ad hoc scheme) and uses the
linear minimum-mean-square estimate ``x_hat = w * recon + (1 - w) * mean`` with
``w = sd^2 / (sd^2 + noise var)``: it never does worse than guessing the mean (error = sd).

The file has two implausible heights (1.65, apparently metres, and 58, apparently a weight);
they are kept as recorded: the attack reconstructs whatever was stored.

Run ``python examples/loo_attack.py [--out DIR] [--runs 1000] [--epsilon 1]``; ``main(argv)``
returns the matplotlib figures (also saved as PNG files in ``--out``, a temporary folder by
default).  Reference for the attack: Dinur & Nissim, "Revealing information while preserving
privacy", PODS 2003; the fix: Dwork, McSherry, Nissim & Smith, TCC 2006.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "datasets" / "ds004148" / "participants.tsv"
BOUNDS = (140.0, 200.0)


def load_heights(path: Path = DATA) -> np.ndarray:
    """Heights (cm) of the participants, missing values ('n/a') dropped."""
    df = pd.read_csv(path, sep="\t", na_values=["n/a", " ", ""], usecols=["Height"])
    return df["Height"].dropna().to_numpy(dtype=np.float64)


def loo_release(x: np.ndarray) -> tuple[float, np.ndarray]:
    """Exact mean and leave-one-out means."""
    n = x.size
    total = x.sum()
    return total / n, (total - x) / (n - 1)


def reconstruct(mean: np.ndarray, loo: np.ndarray, n: int) -> np.ndarray:
    """The attack: ``x_i = n * mean - (n - 1) * loo_i`` (broadcast over leading axes)."""
    return n * np.asarray(mean)[..., None] - (n - 1) * loo


def attacker_rmse(
    x: np.ndarray,
    means: np.ndarray,
    loos: np.ndarray,
    ks: np.ndarray,
    noise_var: np.ndarray | None,
    prior_mean: float,
    prior_sd: float,
) -> tuple[np.ndarray, np.ndarray]:
    """RMSE of the attacker who averages the first ``k`` releases, for each ``k`` in ``ks``.

    ``noise_var[k-1]`` is the variance of one reconstructed height after averaging ``k``
    releases (``None``: estimated from the spread of the ``k`` releases).  Returns the RMSEs
    and the estimates at the largest ``k``.
    """
    n = x.size
    csum_m = np.cumsum(means, axis=0)
    csum_l = np.cumsum(loos, axis=0)
    recon_each = reconstruct(means, loos, n)  # (runs, n)
    csum_r2 = np.cumsum(recon_each**2, axis=0)
    out = np.empty(ks.size)
    est = x
    for j, k in enumerate(ks):
        recon = reconstruct(csum_m[k - 1] / k, csum_l[k - 1] / k, n)
        if noise_var is None:  # ad hoc scheme: estimate the noise from the releases themselves
            if k > 1:
                var1 = (csum_r2[k - 1] / k - recon**2) * k / (k - 1)
                var = float(np.mean(np.maximum(var1, 0.0))) / k
            else:
                var = prior_sd**2  # one release: the attacker cannot tell; assume the worst
        else:
            var = float(noise_var[j])
        w = prior_sd**2 / (prior_sd**2 + var) if var > 0 else 1.0
        est = w * recon + (1 - w) * prior_mean
        out[j] = float(np.sqrt(np.mean((est - x) ** 2)))
    return out, est


def simulate(
    x: np.ndarray, runs: int, epsilon: float, rng: np.random.Generator, dp_random_state: Any
) -> dict[str, Any]:
    """Monte Carlo of ``runs`` releases under the three schemes; attacker RMSE per ``k``."""
    import veil.dp as dp

    n = x.size
    sd = float(x.std())
    mu = float(x.mean())
    ks = np.unique(np.round(np.logspace(0, np.log10(runs), 25)).astype(int))
    mean, loo = loo_release(x)
    results: dict[str, Any] = {"ks": ks, "sd": sd, "n": n}

    # (a) exact release, identical every time
    means_a = np.full(runs, mean)
    loos_a = np.broadcast_to(loo, (runs, n))
    results["exact"] = attacker_rmse(x, means_a, loos_a, ks, np.zeros(ks.size), mu, sd)

    # (b) ad hoc: fresh Gaussian noise with sd = spread of the LOO means
    sigma = float(loo.std())
    means_b = mean + rng.normal(0.0, sigma, runs)
    loos_b = loo + rng.normal(0.0, sigma, (runs, n))
    results["ad hoc"] = attacker_rmse(x, means_b, loos_b, ks, None, mu, sd)
    results["ad hoc sigma"] = sigma

    # (c) DP: each of the runs * (n + 1) mean queries is a Laplace mechanism charged to one
    # accountant with a lifetime budget of `epsilon` (bounded DP: n is public).
    acc = dp.BudgetAccountant(epsilon=epsilon)
    # 1e-9 relative slack: the float sum of `runs` equal charges must not exceed `epsilon`
    eps_q = epsilon * (1 - 1e-9) / (runs * (n + 1))
    lo, hi = BOUNDS
    xc = np.clip(x, lo, hi)
    m_c, loo_c = loo_release(xc)
    mech_mean = dp.mechanisms.Laplace(
        epsilon=eps_q, sensitivity=(hi - lo) / n, random_state=dp_random_state
    )
    mech_loo = dp.mechanisms.Laplace(
        epsilon=eps_q, sensitivity=(hi - lo) / (n - 1), random_state=dp_random_state
    )
    for _ in range(runs):  # the platform charges every release before answering it
        acc.spend(eps_q * (n + 1), 0.0)
    means_c = mech_mean.randomise(np.full(runs, m_c))
    loos_c = mech_loo.randomise(np.broadcast_to(loo_c, (runs, n)).copy())
    var1 = n**2 * mech_mean.variance(m_c) + (n - 1) ** 2 * mech_loo.variance(loo_c[0])
    results["DP"] = attacker_rmse(x, means_c, loos_c, ks, var1 / ks, mu, sd)
    results["DP epsilon spent"] = float(acc.total()[0])
    results["DP per-query epsilon"] = eps_q
    return results


def plot(results: dict[str, Any], x: np.ndarray) -> dict[str, Any]:
    """Figures: attacker RMSE vs releases averaged; true vs estimated heights."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ks, sd = results["ks"], results["sd"]
    fig1, ax = plt.subplots(figsize=(7, 4.5))
    styles = {"exact": "C3", "ad hoc": "C1", "DP": "C0"}
    floor = 1e-3
    for letter, (name, color) in zip("abc", styles.items()):
        rmse = results[name][0]
        label = f"({letter}) {name}"
        if rmse.max() < floor:
            label += f" (error {rmse.max():.0e}, drawn at {floor:g})"
        ax.plot(ks, np.maximum(rmse, floor), marker="o", ms=3, color=color, label=label)
    ax.axhline(sd, color="k", ls="--", lw=1, label=f"population sd ({sd:.1f} cm)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(floor / 2, sd * 5)
    ax.set_xlabel("releases averaged by the attacker")
    ax.set_ylabel("attacker RMSE (cm)")
    ax.set_title(f"Leave-one-out attack on {results['n']} heights (ds004148)")
    ax.legend(fontsize=8)
    fig1.tight_layout()

    fig2, axes = plt.subplots(1, 3, figsize=(10, 3.4), sharex=True, sharey=True)
    for axis, (name, color) in zip(axes, styles.items()):
        est = results[name][1]
        axis.scatter(x, est, s=10, color=color)
        axis.plot(BOUNDS, BOUNDS, "k:", lw=1)
        axis.set_title(f"{name}: RMSE {results[name][0][-1]:.2g} cm")
        axis.set_xlabel("true height (cm)")
    axes[0].set_ylabel(f"estimate after {ks[-1]} releases")
    fig2.tight_layout()
    return {"rmse": fig1, "reconstruction": fig2}


def run(argv: Sequence[str] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run the attack; print a summary, save PNGs; return (figures, results)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=DATA, help="participants.tsv of ds004148")
    p.add_argument("--out", type=Path, help="folder for the PNG files (default: a temp dir)")
    p.add_argument("--runs", type=int, default=1000, help="releases in the Monte Carlo")
    p.add_argument("--epsilon", type=float, default=1.0, help="lifetime budget of the DP scheme")
    p.add_argument("--seed", type=int, help="reproducible noise (DP noise then NOT secure)")
    args = p.parse_args(list(argv) if argv is not None else None)

    x = load_heights(args.data)
    rng = np.random.default_rng(args.seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a seeded DP generator warns that it is not secure
        results = simulate(x, args.runs, args.epsilon, rng, args.seed)
    out_dir = args.out or Path(tempfile.mkdtemp(prefix="veil-loo-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = plot(results, x)
    for name, fig in figures.items():
        fig.savefig(out_dir / f"loo_attack_{name}.png", dpi=110)

    mean, loo = loo_release(x)
    exact = reconstruct(np.array(mean), loo, x.size)
    print(f"{x.size} heights, population sd {results['sd']:.2f} cm")
    print(f"(a) exact LOO means: max reconstruction error {np.abs(exact - x).max():.2e} cm")
    for name in ("exact", "ad hoc", "DP"):
        rmse = results[name][0]
        print(
            f"    {name:7s} attacker RMSE: 1 release {rmse[0]:8.3f} cm, {results['ks'][-1]} releases {rmse[-1]:8.3f} cm"
        )
    print(
        f"(c) DP spent epsilon={results['DP epsilon spent']:.3g} in total "
        f"({results['DP per-query epsilon']:.2e} per mean query); figures in {out_dir}"
    )
    results["out_dir"] = out_dir
    return figures, results


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the attack (see :func:`run`) and return the matplotlib figures by name."""
    return run(argv)[0]


if __name__ == "__main__":
    main(sys.argv[1:])
