# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""NumPy side of the interop example: `make DIR` writes a dataset with np.save; `check DIR` loads the weights texpr
saved with np.load and checks that they classify the dataset (NumPy's own forward pass, argmax)."""
import sys

import numpy as np


def make(d):
    rng = np.random.default_rng(0)
    centres = rng.normal(0.0, 2.0, size=(3, 8)).astype(np.float32)
    y = np.arange(300, dtype=np.int64) % 3
    x = (centres[y] + rng.normal(size=(300, 8))).astype(np.float32)
    np.save(f"{d}/x.npy", x)
    np.save(f"{d}/y.npy", y)


def check(d):
    x, y = np.load(f"{d}/x.npy"), np.load(f"{d}/y.npy")
    w1, b1, w2, b2 = (np.load(f"{d}/{n}.npy") for n in ("w1", "b1", "w2", "b2"))
    assert w1.dtype == np.float32 and w1.shape == (8, 32), (w1.dtype, w1.shape)
    h = x @ w1 + b1
    h = np.where(h > 0, h, np.expm1(np.minimum(h, 0)))
    accuracy = float(np.mean(np.argmax(h @ w2 + b2, axis=1) == y))
    print(f"NumPy: weights loaded with np.load classify {100 * accuracy:.1f}% of the dataset")
    sys.exit(0 if accuracy >= 0.9 else 1)


if __name__ == "__main__":
    {"make": make, "check": check}[sys.argv[1]](sys.argv[2])
