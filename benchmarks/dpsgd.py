"""DP-SGD benchmark: Veil vs Opacus (and a non-private baseline), same models, same run.

Tasks
-----
* ``adult``  -- MLP (in -> 64 -> 2) on UCI Adult (train adult.data, test adult.test),
  categorical columns one-hot encoded, numeric columns standardised with training statistics.
* ``digits`` -- small CNN (2 x [conv 3x3, ReLU, max-pool 2] + linear) on scikit-learn's 8x8
  digits, fixed 80/20 split.

For each task the same initial weights, optimizer (SGD), batch size, clipping norm, noise
multiplier and number of epochs are used by every framework.  Poisson sampling in both DP
libraries.  The noise multiplier for a target epsilon in {1, 3, 8} (delta = 1e-5) is
calibrated once with Veil's RDP accountant and given to both; each library then reports the
epsilon its own accountant computed for the run.

Throughput = training samples processed / training time (evaluation excluded), both per
wall-clock second and per CPU second of the process (the robust figure on a shared machine),
best of ``--repeats`` interleaved (round-robin) timing runs at the epsilon = 3 setting.

Run (benchmark environment with opacus 1.6)::

    .venv/bin/python benchmarks/dpsgd.py            # ~3 min on 2 cores
    .venv/bin/python benchmarks/dpsgd.py --quick    # ~30 s smoke run
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from veil.dp._rdp import RDPAccountant, noise_multiplier_for
from veil.ml.dpsgd import make_private

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT / "datasets" / "adult"
COLS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
]  # fmt: skip
DELTA = 1e-5


def load_adult() -> tuple[TensorDataset, torch.Tensor, torch.Tensor]:
    kw = {"names": COLS, "skipinitialspace": True, "na_values": ["?"], "header": None}
    train = pd.read_csv(ADULT / "adult.data", **kw).dropna()
    test = pd.read_csv(ADULT / "adult.test", skiprows=1, **kw).dropna()
    y_tr = train.pop("income").str.startswith(">50K").to_numpy()
    y_te = test.pop("income").str.startswith(">50K").to_numpy()
    num = [c for c in COLS[:-1] if pd.api.types.is_numeric_dtype(train[c])]
    cat = [c for c in COLS[:-1] if c not in num]
    mu, sd = train[num].mean(), train[num].std()
    parts_tr, parts_te = [((train[num] - mu) / sd).to_numpy()], [((test[num] - mu) / sd).to_numpy()]
    for c in cat:
        levels = np.array(sorted(train[c].astype(str).unique()))
        parts_tr.append((train[c].astype(str).to_numpy()[:, None] == levels).astype(float))
        parts_te.append((test[c].astype(str).to_numpy()[:, None] == levels).astype(float))
    x_tr = torch.tensor(np.hstack(parts_tr), dtype=torch.float32)
    x_te = torch.tensor(np.hstack(parts_te), dtype=torch.float32)
    return (
        TensorDataset(x_tr, torch.tensor(y_tr, dtype=torch.long)),
        x_te,
        torch.tensor(y_te, dtype=torch.long),
    )


def load_digits() -> tuple[TensorDataset, torch.Tensor, torch.Tensor]:
    from sklearn.datasets import load_digits as _ld

    x, y = _ld(return_X_y=True)
    x = torch.tensor(x / 16.0, dtype=torch.float32).reshape(-1, 1, 8, 8)
    y = torch.tensor(y, dtype=torch.long)
    perm = torch.randperm(len(y), generator=torch.Generator().manual_seed(0))
    cut = int(0.8 * len(y))
    tr, te = perm[:cut], perm[cut:]
    return TensorDataset(x[tr], y[tr]), x[te], y[te]


def mlp(d: int) -> nn.Module:
    return nn.Sequential(nn.Linear(d, 64), nn.ReLU(), nn.Linear(64, 2))


def cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 2 * 2, 10),
    )  # fmt: skip


TASKS = {
    # name: (loader, model factory, batch size, epochs, lr, max_grad_norm)
    "adult": (load_adult, None, 256, 5, 0.2, 1.0),
    "digits": (load_digits, cnn, 128, 30, 0.2, 0.5),
}


def train_once(
    framework: str,
    init: nn.Module,
    train: TensorDataset,
    x_te: torch.Tensor,
    y_te: torch.Tensor,
    *,
    batch: int,
    epochs: int,
    lr: float,
    clip: float,
    sigma: float,
) -> dict:
    model = copy.deepcopy(init)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loader = DataLoader(train, batch_size=batch, shuffle=True)
    eps = None
    engine = None
    if framework == "veil":
        model, opt, loader = make_private(
            model, opt, loader, noise_multiplier=sigma, max_grad_norm=clip
        )
    elif framework.startswith("opacus"):
        from opacus import PrivacyEngine

        engine = PrivacyEngine(accountant="rdp")
        kw = {
            "module": model, "optimizer": opt, "data_loader": loader, "noise_multiplier": sigma,
            "max_grad_norm": clip, "poisson_sampling": True,
        }  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if framework == "opacus-ghost":
                model, opt, lossf, loader = engine.make_private(
                    **kw, criterion=nn.CrossEntropyLoss(), grad_sample_mode="ghost"
                )
            else:
                model, opt, loader = engine.make_private(**kw)
    if framework != "opacus-ghost":
        lossf = nn.CrossEntropyLoss()
    seen = 0
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            lossf(model(x), y).backward()
            opt.step()
            seen += len(y)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    model.eval()
    with torch.no_grad():
        acc = float((model(x_te).argmax(1) == y_te).float().mean())
    other = None  # the other library's accountant on this run's exact history
    if framework == "veil":
        eps = opt.get_epsilon(DELTA)
        other = _opacus_eps(opt.accountant.history)
    elif engine is not None:
        eps = engine.get_epsilon(DELTA)
        acc_v = RDPAccountant()
        for s_, q_, n_ in engine.accountant.history:
            acc_v.step(noise_multiplier=s_, sample_rate=q_, steps=n_)
        other = acc_v.get_epsilon(DELTA)
    return {
        "samples_per_s": seen / wall, "samples_per_cpu_s": seen / cpu, "wall_s": wall,
        "cpu_s": cpu, "accuracy": acc, "epsilon": eps,
        "epsilon_other_accountant": other,
    }  # fmt: skip


def _opacus_eps(history: list) -> float | None:
    try:
        from opacus.accountants import RDPAccountant as OpacusRDP
    except ImportError:
        return None
    acct = OpacusRDP()
    acct.history = [(s, q, n) for s, q, n in history]
    return acct.get_epsilon(DELTA)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="~30 s smoke run")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    ap.add_argument("--repeats", type=int, default=2, help="timing repeats (best is kept)")
    ap.add_argument("--json", type=Path, help="write raw results here")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    try:
        import opacus

        have_opacus = True
        opacus_version = opacus.__version__
    except ImportError:
        have_opacus, opacus_version = False, "absent"
    frameworks = ["nonprivate", "veil"] + (["opacus", "opacus-ghost"] if have_opacus else [])
    eps_grid = [3.0] if args.quick else [1.0, 3.0, 8.0]
    results: dict = {
        "torch": torch.__version__, "opacus": opacus_version, "threads": args.threads,
        "load_before": os.getloadavg(), "tasks": {},
    }  # fmt: skip
    for name, (load, factory, batch, epochs, lr, clip) in TASKS.items():
        train, x_te, y_te = load()
        if args.quick:
            epochs = 1 if name == "adult" else 3
        torch.manual_seed(0)
        init = factory() if factory else mlp(train.tensors[0].shape[1])
        q = batch / len(train)
        steps = epochs * round(1 / q)
        task: dict = {"n_train": len(train), "batch": batch, "epochs": epochs, "lr": lr,
                      "max_grad_norm": clip, "runs": {}}  # fmt: skip
        for target in eps_grid:
            sigma = noise_multiplier_for(target, DELTA, q, steps)
            timing = target == 3.0
            fws = [f for f in frameworks if timing or f in ("veil", "opacus")]
            # timing runs are interleaved (round robin) so that load drift hits all alike
            runs: dict[str, list] = {f: [] for f in fws}
            for _ in range(args.repeats if timing else 1):
                for fw in fws:
                    runs[fw].append(
                        train_once(
                            fw,
                            init,
                            train,
                            x_te,
                            y_te,
                            batch=batch,
                            epochs=epochs,
                            lr=lr,
                            clip=clip,
                            sigma=sigma,
                        )  # fmt: skip
                    )
            for fw in fws:
                best = max(runs[fw], key=lambda r: r["samples_per_cpu_s"])
                key = fw if fw == "nonprivate" else f"{fw}@{target:g}"
                task["runs"][key] = {
                    **best, "sigma": sigma, "accuracy_all": [r["accuracy"] for r in runs[fw]],
                }  # fmt: skip
                other = best["epsilon_other_accountant"]
                print(
                    f"{name:7s} {key:15s} sigma={sigma:.3f} eps={best['epsilon'] or 0:.3f} "
                    f"(other accountant {other or 0:.3f}) acc={best['accuracy']:.4f} "
                    f"{best['samples_per_s']:8.0f} samples/s (wall) "
                    f"{best['samples_per_cpu_s']:8.0f} samples/cpu-s",
                    flush=True,
                )
        results["tasks"][name] = task
    results["load_after"] = os.getloadavg()
    print(f"load average before {results['load_before']} after {results['load_after']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
