"""Shared by the golden scripts: load what `wsp run --dump-tensors DIR` wrote, compare with a
NumPy float64 reference.

Error measure: max |ours - reference| / max |reference| over the tensor (relative to the
tensor's scale, so entries near zero do not divide by ~0). Tolerances: 1e-5 for f32 outputs,
1e-2 for f16/bf16 outputs. The tolerance follows the lowest precision on the output's path: an
f32 tensor computed through a cast to f16 is checked as f16 (callers pass `via="float16"`),
since one f16 rounding that an f32 pipeline and a float64 one decide differently already moves
the result by about 2^-11. bf16 is dumped as f32, so callers pass its dtype the same way.
"""
import sys
from pathlib import Path

import numpy as np

TOLERANCE = {"float32": 1e-5, "float64": 1e-12, "float16": 1e-2, "bfloat16": 1e-2}


class Golden:
    def __init__(self):
        if len(sys.argv) != 2:
            sys.exit(f"usage: {sys.argv[0]} DUMP_DIR")
        self.dir = Path(sys.argv[1])
        self.failed = False

    def __getitem__(self, name):
        """A tensor as float64 (integers kept exact)."""
        a = np.load(self.dir / f"{name}.npy")
        return a if a.dtype.kind in "iu" else a.astype(np.float64)

    def dtype(self, name):
        return np.load(self.dir / f"{name}.npy").dtype.name

    def check(self, name, reference, via=None):
        ours = np.load(self.dir / f"{name}.npy")
        dtype = via or ours.dtype.name
        reference = np.asarray(reference, dtype=np.float64)
        if ours.shape != reference.shape:
            print(f"{name}: shape {ours.shape}, reference {reference.shape}")
            self.failed = True
            return
        scale = np.max(np.abs(reference))
        err = np.max(np.abs(ours.astype(np.float64) - reference)) / (scale if scale > 0 else 1.0)
        tol = TOLERANCE[dtype]
        ok = bool(err <= tol)
        print(f"{name}: max relative error {err:.3e} ({dtype}, tolerance {tol:g}) {'ok' if ok else 'FAILED'}")
        self.failed |= not ok

    def done(self):
        sys.exit(1 if self.failed else 0)


def f16(x):
    """What `pto.cast(x, F16)` keeps."""
    return np.asarray(x).astype(np.float16).astype(np.float64)


def gelu(x):
    """The tanh approximation the op table names."""
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x**3)))


def silu(x):
    return x / (1 + np.exp(-x))


def softmax_rows(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def rmsnorm_rows(x, eps=1e-6):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
