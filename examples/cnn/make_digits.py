# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes examples/cnn/digits.npz from the copy of the UCI handwritten digits that scikit-learn ships.

The data: E. Alpaydin and C. Kaynak, "Optical Recognition of Handwritten Digits", UCI Machine Learning Repository
(1998), licensed CC BY 4.0; scikit-learn distributes its test set (1797 images of 8 x 8 pixels, each 0..16, in 10
classes) as sklearn.datasets.load_digits. Run once with an environment that has scikit-learn and NumPy:

    python examples/cnn/make_digits.py

The archive holds `images` (1797, 8, 8) int32 and `labels` (1797,) int32 (dtypes texpr's .npy reader reads), in scikit-learn's order, stored
uncompressed (np.savez) so that texpr reads it without zlib.
"""
import os

import numpy as np
from sklearn.datasets import load_digits


def main() -> None:
    digits = load_digits()
    images = digits.images.astype(np.int32)
    labels = digits.target.astype(np.int32)
    assert images.shape == (1797, 8, 8) and labels.shape == (1797,)
    assert np.array_equal(images.astype(np.float64), digits.images)  # 0..16: exact in int32
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "digits.npz")
    np.savez(out, images=images, labels=labels)
    print(f"wrote {out}: {images.shape[0]} images, classes {np.bincount(labels).tolist()}")


if __name__ == "__main__":
    main()
