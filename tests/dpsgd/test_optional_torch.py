"""``import veil`` and the torch-free accountant work without torch; veil.ml.dpsgd says how to
install the extra."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys


class _NoTorch:  # make `import torch` fail as if it were not installed
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("No module named 'torch'")


sys.meta_path.insert(0, _NoTorch())
import veil
from veil.dp._rdp import RDPAccountant
acc = RDPAccountant()
acc.step(noise_multiplier=1.0, sample_rate=0.01, steps=10)
assert acc.get_epsilon(1e-5) > 0
import veil.ml  # the DP estimators do not need torch either
try:
    import veil.ml.dpsgd
except ImportError as exc:
    print("IMPORT-ERROR:", exc)
"""


def test_dpsgd_without_torch_gives_install_hint() -> None:
    res = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res.stderr
    assert "IMPORT-ERROR:" in res.stdout
    assert "pip install torch" in res.stdout
