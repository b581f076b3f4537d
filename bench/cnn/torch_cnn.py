# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""examples/cnn's network and step in PyTorch (CPU), for bench/cnn/run.sh: two blocks of 3 x 3 convolution (padding
1, no bias), batch norm (training mode, running statistics updated), ReLU and 2 x 2 max pooling, then a linear layer; softmax cross-entropy and Adam (lr 3e-3), batch 32, on
the same digits.npz. A step is what examples/cnn times: the batch's gather, forward, backward and Adam's update.
Prints "median step T ms" (after the first 10 steps) and the held-out accuracy.

    python bench/cnn/torch_cnn.py DIGITS_NPZ EPOCHS THREADS
"""
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def main() -> None:
    path, epochs, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    data = np.load(path)
    images = torch.from_numpy(data["images"].astype(np.float32) / 8 - 1).unsqueeze(1)  # (n, 1, 8, 8)
    labels = torch.from_numpy(data["labels"].astype(np.int64))
    rng = np.random.default_rng(5)
    order = rng.permutation(len(labels))
    test_n = len(labels) // 5
    train, test = order[: len(labels) - test_n], order[len(labels) - test_n:]

    def he(*shape):
        fan_in = int(np.prod(shape[1:])) if len(shape) == 4 else shape[0]
        return (torch.randn(*shape) * np.sqrt(2 / fan_in)).requires_grad_()
    w1, g1, b1 = he(8, 1, 3, 3), torch.ones(8, requires_grad=True), torch.zeros(8, requires_grad=True)
    w2, g2, b2 = he(16, 8, 3, 3), torch.ones(16, requires_grad=True), torch.zeros(16, requires_grad=True)
    w3, b3 = he(64, 10), torch.zeros(10, requires_grad=True)
    stats = [torch.zeros(8), torch.ones(8), torch.zeros(16), torch.ones(16)]  # running mean, var per block
    params = [w1, g1, b1, w2, g2, b2, w3, b3]
    opt = torch.optim.Adam(params, lr=3e-3)

    def logits(x, training=True):
        h = F.batch_norm(F.conv2d(x, w1, padding=1), stats[0], stats[1], g1, b1, training)
        h = F.max_pool2d(F.relu(h), 2)
        h = F.batch_norm(F.conv2d(h, w2, padding=1), stats[2], stats[3], g2, b2, training)
        h = F.max_pool2d(F.relu(h), 2)
        return h.reshape(x.shape[0], -1) @ w3 + b3

    batch, times = 32, []
    for _ in range(epochs):
        rows = rng.permutation(train)
        for s in range(0, len(rows) - batch + 1, batch):
            t = time.perf_counter()
            pick = torch.from_numpy(rows[s:s + batch])
            x, y = images[pick], labels[pick]
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(logits(x), y)
            loss.backward()
            opt.step()
            loss.item()
            times.append(1000 * (time.perf_counter() - t))
    warm = sorted(times[10:])
    with torch.no_grad():
        accuracy = (logits(images[test], False).argmax(1) == labels[test]).float().mean().item()
    print(f"median step {warm[len(warm) // 2]:.3f} ms")
    print(f"held-out accuracy {100 * accuracy:.2f}%")


if __name__ == "__main__":
    main()
