"""A stand-in ``torch`` with the few tensor operations the estimator and
the TRL trainer subclass use (torch is not installable here)."""

import sys
import types


class FakeTensor:
    def __init__(self, rows, dtype="float32", device="cpu"):
        self.rows, self.dtype, self.device = rows, dtype, device
        self.shape = (len(rows), len(rows[0]) if rows else 0)

    def detach(self):
        return self

    def float(self):
        return self

    def cpu(self):
        return self

    def tolist(self):
        return [list(r) for r in self.rows]

    def __mul__(self, other):
        return FakeTensor([[a * b for a, b in zip(x, y)] for x, y in zip(self.rows, other.rows)], self.dtype, self.device)


def install():
    """Registers the stand-in as ``torch``; returns what to restore."""
    saved = sys.modules.get("torch")
    fake = types.ModuleType("torch")
    fake.float32 = "float32"
    fake.tensor = lambda rows, dtype=None, device=None: FakeTensor(rows, dtype, device)
    sys.modules["torch"] = fake
    return saved


def uninstall(saved):
    if saved is None:
        sys.modules.pop("torch", None)
    else:
        sys.modules["torch"] = saved
