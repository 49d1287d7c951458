"""What the tour notebook (`examples/notebooks/tour.ipynb`) must produce, checked the same way
whoever ran it (nbclient, or JupyterLab in a browser and then saved): the files its `save_npy`
cells wrote, against NumPy float64 references over the saved inputs as the golden tests do
(`tests/golden/`), since the kernel's `randn` is not NumPy's generator."""

from pathlib import Path

import numpy as np

from kernel_client import stats_rows

# Relative error bounds of tests/golden/common.py: f32 results, and results that went
# through an f16 cast.
F32_TOLERANCE = 1e-5
F16_TOLERANCE = 1e-2


def relative_error(ours, reference) -> float:
    scale = np.max(np.abs(reference))
    return float(np.max(np.abs(ours.astype(np.float64) - reference)) / (scale if scale > 0 else 1.0))


def f16(x):
    return np.asarray(x).astype(np.float16).astype(np.float64)


def softmax_rows(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def total_cycles(text: str) -> int:
    """The total cycles of the only run in a stats table."""
    rows = stats_rows(text)
    assert len(rows) == 1, f"one run expected: {text!r}"
    return int(rows[0]["total cycles"].replace(",", ""))


def check_saved_tensors(folder: Path):
    """The tensors the tour saved in `folder` (its notebooks/ copy; the data is in ../data)."""
    x = np.load(folder / "rmsnorm_x.npy")
    y = np.load(folder / "rmsnorm_y.npy")
    assert x.shape == y.shape == (4, 8, 16, 128), (x.shape, y.shape)
    assert x.dtype == y.dtype == np.float32, (x.dtype, y.dtype)
    # randn(seed=0): standard normals (131,072 of them), so mean ~0 and deviation ~1.
    assert abs(float(x.mean())) < 0.02 and abs(float(x.std()) - 1.0) < 0.02, (x.mean(), x.std())
    x64 = x.astype(np.float64)
    reference = x64 / np.sqrt(np.mean(x64 * x64, axis=-1, keepdims=True) + 1e-6)
    assert relative_error(y, reference) <= F32_TOLERANCE, relative_error(y, reference)

    lens = np.load(folder.parent / "data/seq_lens.npy")
    q, k, v = (np.load(folder / f"attention_{n}.npy").astype(np.float64) for n in "qkv")
    o = np.load(folder / "attention_o.npy")
    assert o.shape == (4, 8, 32, 64) and o.dtype == np.float32, (o.shape, o.dtype)
    assert (lens <= 128).any() and (lens > 128).any(), "the data should exercise both tiers"
    reference = np.zeros(o.shape)
    for b in range(4):
        n = 128 if lens[b] <= 128 else 512
        for h in range(8):
            w = softmax_rows(q[b, h] @ k[b, h, :n].T * 0.125)
            reference[b, h] = f16(w) @ v[b, h, :n]
    assert relative_error(o, reference) <= F16_TOLERANCE, relative_error(o, reference)
    # Another schedule of the same workload computes the same values, bit for bit.
    assert np.array_equal(np.load(folder / "attention_o_steal.npy"), o)
