# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The peers' side of bench/peers/run.sh: NumPy, PyTorch (CPU) and JAX (XLA:CPU, jit) on the same cases as
texpr_peer.cpp, reading the same .npy inputs.

  peers.py make DIR                      write the inputs (seeded NumPy draws; make_family: only FAMILY_CASES')
  peers.py run LIB CASE THREADS DIR      time one case (prints "median_ms T") and save its output
  peers.py check DIR CASE...             compare every library's output with NumPy's float64 reference
"""
import os
import sys
import time

CASES = ["fused_sum", "mean_axis1", "elu_chain", "matmul", "mlp_forward", "sgd_step", "adam_step", "softmax",
         "cross_entropy"]
# Scans, sorts, top-k and einsum (issue 37): bench/peers/run.sh runs them with PEER_CASES=family.
FAMILY_CASES = ["copy_flat", "cumsum_flat", "cumsum_axis0", "cumsum_axis1", "sort_flat", "argsort_flat", "sort_rows",
                "argsort_rows", "topk", "einsum_bmm", "bmm"]
# Linear algebra (issue 38): PEER_CASES=linalg. float64, as NumPy's linalg is mostly used.
LINALG_CASES = ["cholesky_256", "cholesky_1024", "solve_256", "solve_1024", "solve_batched"]
# Convolution (issue 39): PEER_CASES=conv. ResNet-style layers, batch 8, float32; "_train" is the forward and both
# gradients (input and filters) for an upstream gradient g. NumPy has no convolution: PyTorch in float64 is the
# reference of the check.
CONV_LAYERS = {"conv3x3_64_56": ("cx64", "cw64", "cg64", 1), "conv3x3_128_28": ("cx128", "cw128", "cg128", 1),
               "conv1x1_256_56": ("cx256", "cw1", "cg1", 0)}
CONV_CASES = [c + t for c in CONV_LAYERS for t in ("", "_train")]
REPS = {"cholesky_256": 21, "cholesky_1024": 7, "solve_256": 21, "solve_1024": 7, "solve_batched": 21, "fused_sum": 15, "mean_axis1": 15, "elu_chain": 11, "matmul": 11, "mlp_forward": 31, "sgd_step": 21,
        "adam_step": 51, "softmax": 11, "cross_entropy": 15, "copy_flat": 15, "cumsum_flat": 11, "cumsum_axis0": 7,
        "cumsum_axis1": 7, "sort_flat": 7, "argsort_flat": 7, "sort_rows": 5, "argsort_rows": 5, "topk": 5,
        "einsum_bmm": 9, "bmm": 9, **{c: 5 for c in CONV_CASES}}
LR = 0.1
# adam_step: torch.optim.AdamW's defaults but these; its inputs are the seed MLP's six parameters and a gradient each.
ADAM = {"lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 1e-2}
PARAMS = ("w1", "b1", "w2", "b2", "w3", "b3")
GRADS = tuple("g" + p for p in PARAMS)


def make(d):
    import numpy as np
    rng = np.random.default_rng(2026)
    f32 = np.float32
    save = lambda name, a: np.save(os.path.join(d, name + ".npy"), a)
    n = 1 << 24
    for k in "abc":
        save(k, rng.uniform(-1, 1, n).astype(f32))
    save("x", rng.standard_normal((4096, 4096), dtype=f32))
    save("mu", rng.standard_normal(4096, dtype=f32))
    save("s", rng.uniform(0.5, 1.5, 4096).astype(f32))
    save("bias", rng.standard_normal(4096, dtype=f32))
    save("ma", rng.standard_normal((1024, 1024), dtype=f32))
    save("mb", rng.standard_normal((1024, 1024), dtype=f32))
    for name, (i, o) in {"1": (784, 256), "2": (256, 256), "3": (256, 10)}.items():
        save("w" + name, (rng.standard_normal((i, o)) / np.sqrt(i)).astype(f32))
        save("b" + name, (0.1 * rng.standard_normal(o)).astype(f32))
    for b in (64, 128):
        save(f"x{b}", rng.standard_normal((b, 784), dtype=f32))
        save(f"y{b}", np.eye(10, dtype=f32)[rng.integers(0, 10, b)])
    save("logits", (4 * rng.standard_normal((4096, 1000))).astype(f32))
    save("labels", rng.integers(0, 1000, 4096).astype(np.int64))
    # adam_step's gradients, from a generator of their own (the draws above stay as they were).
    grng = np.random.default_rng(2027)
    for name, shape in {"1": (784, 256), "2": (256, 256), "3": (256, 10)}.items():
        save("gw" + name, (0.01 * grng.standard_normal(shape)).astype(f32))
        save("gb" + name, (0.01 * grng.standard_normal(shape[1])).astype(f32))


def make_family(d):
    """The inputs of FAMILY_CASES, from a generator of their own (the other inputs stay as they were)."""
    import numpy as np
    rng = np.random.default_rng(2037)
    f32 = np.float32
    save = lambda name, a: np.save(os.path.join(d, name + ".npy"), a)
    save("sflat", rng.standard_normal(1 << 20, dtype=f32))
    save("srows", rng.standard_normal((4096, 1024), dtype=f32))
    save("tk", rng.standard_normal((4096, 32768), dtype=f32))
    save("ea", rng.standard_normal((64, 128, 128), dtype=f32))
    save("eb", rng.standard_normal((64, 128, 128), dtype=f32))


def make_linalg(d):
    """The inputs of LINALG_CASES, from a generator of their own: symmetric positive definite m mᵀ / n + I, general
    matrices with a shifted diagonal (well conditioned), right-hand sides; float64."""
    import numpy as np
    rng = np.random.default_rng(2038)
    save = lambda name, a: np.save(os.path.join(d, name + ".npy"), a)
    for n in (256, 1024):
        m = rng.standard_normal((n, n))
        save(f"spd{n}", m @ m.T / n + np.eye(n))
        save(f"ga{n}", rng.standard_normal((n, n)) + 4 * np.sqrt(n) * np.eye(n))
        save(f"gb{n}", rng.standard_normal((n, 16)))
    save("ba", rng.standard_normal((64, 32, 32)) + 8 * np.eye(32))
    save("bb", rng.standard_normal((64, 32, 1)))


def make_conv(d):
    """The inputs of CONV_CASES: images, He-scaled filters and upstream gradients, float32."""
    import numpy as np
    rng = np.random.default_rng(2039)
    save = lambda name, a: np.save(os.path.join(d, name + ".npy"), a.astype(np.float32))
    for c, hw, o, k, name in ((64, 56, 64, 3, "64"), (128, 28, 128, 3, "128"), (256, 56, 64, 1, "256")):
        save(f"cx{name}", rng.standard_normal((8, c, hw, hw)))
        wname, gname = ("cw1", "cg1") if k == 1 else (f"cw{name}", f"cg{name}")
        save(wname, rng.standard_normal((o, c, k, k)) * np.sqrt(2 / (c * k * k)))
        save(gname, rng.standard_normal((8, o, hw, hw)))


def conv_reference(case, d):
    """PyTorch in float64: the convolution, or its input and filter gradients flattened one after the other."""
    import numpy as np
    import torch
    import torch.nn.functional as F
    base = case[:-len("_train")] if case.endswith("_train") else case
    xn, wn, gn, pad = CONV_LAYERS[base]
    x, w, g = (torch.from_numpy(a.astype(np.float64)) for a in load(d, xn, wn, gn))
    if base == case:
        return F.conv2d(x, w, padding=pad).numpy()
    x.requires_grad_()
    w.requires_grad_()
    dx, dw = torch.autograd.grad(F.conv2d(x, w, padding=pad), (x, w), g)
    return np.concatenate([dx.numpy().ravel(), dw.numpy().ravel()])


def load(d, *names):
    import numpy as np
    return [np.load(os.path.join(d, n + ".npy")) for n in names]


def median_ms(f, reps):
    f()  # warm-up (and JAX's compilation)
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        ts.append(1000 * (time.perf_counter() - t))
    ts.sort()
    return ts[len(ts) // 2]


def numpy_cases(d):
    import numpy as np

    def elu(v):
        return np.where(v > 0, v, np.expm1(np.minimum(v, 0)))

    def mlp(x, w1, b1, w2, b2, w3, b3):
        z1 = x @ w1 + b1
        h1 = elu(z1)
        z2 = h1 @ w2 + b2
        h2 = elu(z2)
        return z1, h1, z2, h2, h2 @ w3 + b3

    def sgd(x, y, w1, b1, w2, b2, w3, b3):  # backpropagation by hand (NumPy has no autograd)
        z1, h1, z2, h2, out = mlp(x, w1, b1, w2, b2, w3, b3)
        g = 2 * (out - y) / out.size
        gw3, gb3 = h2.T @ g, g.sum(0)
        g = (g @ w3.T) * np.where(z2 > 0, 1, h2 + 1)
        gw2, gb2 = h1.T @ g, g.sum(0)
        g = (g @ w2.T) * np.where(z1 > 0, 1, h1 + 1)
        gw1, gb1 = x.T @ g, g.sum(0)
        return tuple(p - LR * gp for p, gp in zip((w1, b1, w2, b2, w3, b3), (gw1, gb1, gw2, gb2, gw3, gb3)))

    def adamw(*pg):  # one AdamW step from zero moments (step 1), PyTorch's formulas, new arrays
        ps, gs = pg[:6], pg[6:]
        a, out = ADAM, []
        for p, g in zip(ps, gs):
            m = (1 - a["beta1"]) * g
            v = (1 - a["beta2"]) * g * g
            denom = np.sqrt(v) / np.sqrt(1 - a["beta2"]) + a["eps"]
            out.append(p * (1 - a["lr"] * a["weight_decay"]) - a["lr"] / (1 - a["beta1"]) * m / denom)
        return tuple(out)

    def softmax(z):
        e = np.exp(z - z.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    def cross_entropy(z, l):
        m = z.max(1, keepdims=True)
        lse = m[:, 0] + np.log(np.exp(z - m).sum(1))
        return np.mean(lse - z[np.arange(z.shape[0]), l])

    def topk(x):  # NumPy has none: argpartition, then the k sorted (what a NumPy user writes)
        part = np.argpartition(-x, 8, axis=1)[:, :8]
        v = np.take_along_axis(x, part, 1)
        return -np.sort(-v, axis=1)

    return np, {
        "cholesky_256": (lambda a: np.linalg.cholesky(a), ("spd256",)),
        "cholesky_1024": (lambda a: np.linalg.cholesky(a), ("spd1024",)),
        "solve_256": (lambda a, b: np.linalg.solve(a, b), ("ga256", "gb256")),
        "solve_1024": (lambda a, b: np.linalg.solve(a, b), ("ga1024", "gb1024")),
        "solve_batched": (lambda a, b: np.linalg.solve(a, b), ("ba", "bb")),
        "copy_flat": (lambda a: np.copy(a), ("a",)),
        "cumsum_flat": (lambda a: np.cumsum(a), ("a",)),
        "cumsum_axis0": (lambda x: np.cumsum(x, 0), ("x",)),
        "cumsum_axis1": (lambda x: np.cumsum(x, 1), ("x",)),
        "sort_flat": (lambda x: np.sort(x, kind="stable"), ("sflat",)),
        "argsort_flat": (lambda x: np.argsort(x, kind="stable"), ("sflat",)),
        "sort_rows": (lambda x: np.sort(x, 1, kind="stable"), ("srows",)),
        "argsort_rows": (lambda x: np.argsort(x, 1, kind="stable"), ("srows",)),
        "topk": (topk, ("tk",)),
        "einsum_bmm": (lambda a, b: np.einsum("bij,bjk->bik", a, b), ("ea", "eb")),
        "bmm": (lambda a, b: a @ b, ("ea", "eb")),
        "fused_sum": (lambda a, b, c: np.sum(a * b + c), ("a", "b", "c")),
        "mean_axis1": (lambda x: x.mean(1), ("x",)),
        "elu_chain": (lambda x, mu, s, b: elu((x - mu) * s + b) * np.float32(0.5) + x, ("x", "mu", "s", "bias")),
        "matmul": (lambda a, b: a @ b, ("ma", "mb")),
        "mlp_forward": (lambda x, y, *w: np.mean((mlp(x, *w)[-1] - y) ** 2), ("x64", "y64", "w1", "b1", "w2", "b2", "w3", "b3")),
        "sgd_step": (lambda x, y, *w: sgd(x, y, *w), ("x128", "y128", "w1", "b1", "w2", "b2", "w3", "b3")),
        "adam_step": (adamw, PARAMS + GRADS),
        "softmax": (softmax, ("logits",)),
        "cross_entropy": (cross_entropy, ("logits", "labels")),
    }


def torch_cases(threads):
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(threads)

    def mlp(x, w1, b1, w2, b2, w3, b3):
        return F.elu(F.elu(x @ w1 + b1) @ w2 + b2) @ w3 + b3

    def sgd(x, y, w1, b1, w2, b2, w3, b3):
        ps = [p.detach().requires_grad_() for p in (w1, b1, w2, b2, w3, b3)]
        loss = torch.mean((mlp(x, *ps) - y) ** 2)
        g = torch.autograd.grad(loss, ps)
        with torch.no_grad():
            return tuple(p - LR * gp for p, gp in zip(ps, g))

    state = {}

    def adamw(*pg):
        # torch.optim.AdamW(foreach=True): its in-place multi-tensor step on the parameters, every repetition (the
        # work per step does not depend on the step count). The first step's parameters are what is checked.
        if not state:
            ps = [p.clone() for p in pg[:6]]
            for p, g in zip(ps, pg[6:]):
                p.grad = g
            a = ADAM
            state["opt"] = torch.optim.AdamW(ps, lr=a["lr"], betas=(a["beta1"], a["beta2"]), eps=a["eps"],
                                             weight_decay=a["weight_decay"], foreach=True)
            state["opt"].step()
            state["first"] = tuple(p.detach().clone() for p in ps)
        else:
            state["opt"].step()
        return state["first"]

    def conv(base, train):
        pad = CONV_LAYERS[base][3]
        if not train:
            return lambda x, w, g: F.conv2d(x, w, padding=pad)

        def step(x, w, g):  # the forward, then both gradients, as a training step runs them
            x, w = x.detach().requires_grad_(), w.detach().requires_grad_()
            return torch.autograd.grad(F.conv2d(x, w, padding=pad), (x, w), g)
        return step
    convs = {c: (conv(b, c != b), CONV_LAYERS[b][:3]) for b in CONV_LAYERS for c in (b, b + "_train")}

    return torch, {
        **convs,
        "cholesky_256": (lambda a: torch.linalg.cholesky(a), ("spd256",)),
        "cholesky_1024": (lambda a: torch.linalg.cholesky(a), ("spd1024",)),
        "solve_256": (lambda a, b: torch.linalg.solve(a, b), ("ga256", "gb256")),
        "solve_1024": (lambda a, b: torch.linalg.solve(a, b), ("ga1024", "gb1024")),
        "solve_batched": (lambda a, b: torch.linalg.solve(a, b), ("ba", "bb")),
        "copy_flat": (lambda a: a.clone(), ("a",)),
        "cumsum_flat": (lambda a: torch.cumsum(a, 0), ("a",)),
        "cumsum_axis0": (lambda x: torch.cumsum(x, 0), ("x",)),
        "cumsum_axis1": (lambda x: torch.cumsum(x, 1), ("x",)),
        "sort_flat": (lambda x: torch.sort(x, stable=True).values, ("sflat",)),
        "argsort_flat": (lambda x: torch.argsort(x, stable=True), ("sflat",)),
        "sort_rows": (lambda x: torch.sort(x, dim=1, stable=True).values, ("srows",)),
        "argsort_rows": (lambda x: torch.argsort(x, dim=1, stable=True), ("srows",)),
        "topk": (lambda x: torch.topk(x, 8, 1).values, ("tk",)),
        "einsum_bmm": (lambda a, b: torch.einsum("bij,bjk->bik", a, b), ("ea", "eb")),
        "bmm": (lambda a, b: torch.bmm(a, b), ("ea", "eb")),
        "fused_sum": (lambda a, b, c: torch.sum(a * b + c), ("a", "b", "c")),
        "mean_axis1": (lambda x: x.mean(1), ("x",)),
        "elu_chain": (lambda x, mu, s, b: F.elu((x - mu) * s + b) * 0.5 + x, ("x", "mu", "s", "bias")),
        "matmul": (lambda a, b: a @ b, ("ma", "mb")),
        "mlp_forward": (lambda x, y, *w: torch.mean((mlp(x, *w) - y) ** 2), ("x64", "y64", "w1", "b1", "w2", "b2", "w3", "b3")),
        "sgd_step": (sgd, ("x128", "y128", "w1", "b1", "w2", "b2", "w3", "b3")),
        "adam_step": (adamw, PARAMS + GRADS),
        "softmax": (lambda z: torch.softmax(z, 1), ("logits",)),
        "cross_entropy": (lambda z, l: F.cross_entropy(z, l), ("logits", "labels")),
    }


def jax_cases():
    import jax
    import jax.numpy as jnp

    def mlp(x, w1, b1, w2, b2, w3, b3):
        return jax.nn.elu(jax.nn.elu(x @ w1 + b1) @ w2 + b2) @ w3 + b3

    def loss(ps, x, y):
        return jnp.mean((mlp(x, *ps) - y) ** 2)

    def sgd(x, y, *ps):
        return tuple(p - LR * g for p, g in zip(ps, jax.grad(loss)(ps, x, y)))

    def ce(z, l):
        return jnp.mean(jax.nn.logsumexp(z, 1) - jnp.take_along_axis(z, l[:, None], 1)[:, 0])

    def adamw(ps, ms, vs, gs):  # AdamW by hand (optax is not installed): new parameters and moments, step 1
        a, t = ADAM, 1
        out = []
        for p, m, v, g in zip(ps, ms, vs, gs):
            m = a["beta1"] * m + (1 - a["beta1"]) * g
            v = a["beta2"] * v + (1 - a["beta2"]) * g * g
            denom = jnp.sqrt(v) / jnp.sqrt(1 - a["beta2"] ** t) + a["eps"]
            out.append((p * (1 - a["lr"] * a["weight_decay"]) - a["lr"] / (1 - a["beta1"] ** t) * m / denom, m, v))
        return tuple(zip(*out))

    adamw_jit = jax.jit(adamw)

    zeros = {}

    def adam_step(*pg):
        ps, gs = pg[:6], pg[6:]
        if not zeros:  # the moments' (zero) state, made once, outside the timing
            zeros["m"] = tuple(jax.block_until_ready(jnp.zeros_like(p)) for p in ps)
        return adamw_jit(ps, zeros["m"], zeros["m"], gs)

    def conv(base, train):
        pad = CONV_LAYERS[base][3]

        def forward(x, w):
            return jax.lax.conv_general_dilated(x, w, (1, 1), [(pad, pad), (pad, pad)],
                                                dimension_numbers=("NCHW", "OIHW", "NCHW"))
        if not train:
            return jax.jit(lambda x, w, g: forward(x, w))

        def step(x, w, g):  # the forward, then both gradients
            _, back = jax.vjp(forward, x, w)
            return back(g)
        return jax.jit(step)
    convs = {c: (conv(b, c != b), CONV_LAYERS[b][:3]) for b in CONV_LAYERS for c in (b, b + "_train")}

    j = jax.jit
    return jnp, {
        **convs,
        "cholesky_256": (j(lambda a: jnp.linalg.cholesky(a)), ("spd256",)),
        "cholesky_1024": (j(lambda a: jnp.linalg.cholesky(a)), ("spd1024",)),
        "solve_256": (j(lambda a, b: jnp.linalg.solve(a, b)), ("ga256", "gb256")),
        "solve_1024": (j(lambda a, b: jnp.linalg.solve(a, b)), ("ga1024", "gb1024")),
        "solve_batched": (j(lambda a, b: jnp.linalg.solve(a, b)), ("ba", "bb")),
        "copy_flat": (j(lambda a: a * 1), ("a",)),
        "cumsum_flat": (j(lambda a: jnp.cumsum(a)), ("a",)),
        "cumsum_axis0": (j(lambda x: jnp.cumsum(x, 0)), ("x",)),
        "cumsum_axis1": (j(lambda x: jnp.cumsum(x, 1)), ("x",)),
        "sort_flat": (j(lambda x: jnp.sort(x, stable=True)), ("sflat",)),
        "argsort_flat": (j(lambda x: jnp.argsort(x, stable=True)), ("sflat",)),
        "sort_rows": (j(lambda x: jnp.sort(x, 1, stable=True)), ("srows",)),
        "argsort_rows": (j(lambda x: jnp.argsort(x, 1, stable=True)), ("srows",)),
        "topk": (j(lambda x: jax.lax.top_k(x, 8)[0]), ("tk",)),
        "einsum_bmm": (j(lambda a, b: jnp.einsum("bij,bjk->bik", a, b)), ("ea", "eb")),
        "bmm": (j(lambda a, b: a @ b), ("ea", "eb")),
        "fused_sum": (j(lambda a, b, c: jnp.sum(a * b + c)), ("a", "b", "c")),
        "mean_axis1": (j(lambda x: x.mean(1)), ("x",)),
        "elu_chain": (j(lambda x, mu, s, b: jax.nn.elu((x - mu) * s + b) * 0.5 + x), ("x", "mu", "s", "bias")),
        "matmul": (j(lambda a, b: a @ b), ("ma", "mb")),
        "mlp_forward": (j(lambda x, y, *w: jnp.mean((mlp(x, *w) - y) ** 2)), ("x64", "y64", "w1", "b1", "w2", "b2", "w3", "b3")),
        "sgd_step": (j(sgd), ("x128", "y128", "w1", "b1", "w2", "b2", "w3", "b3")),
        "adam_step": (adam_step, PARAMS + GRADS),
        "softmax": (j(lambda z: jax.nn.softmax(z, 1)), ("logits",)),
        "cross_entropy": (j(ce), ("logits", "labels")),
    }


def run(lib, case, threads, d):
    import numpy as np
    if lib == "numpy":
        _, cases = numpy_cases(d)
        conv, block = (lambda a: a), (lambda r: r)
    elif lib == "torch":
        import torch
        _, cases = torch_cases(threads)
        conv, block = torch.from_numpy, (lambda r: r)
    else:
        if case in LINALG_CASES:  # JAX computes in float32 unless asked: float64, as the others do
            import jax
            jax.config.update("jax_enable_x64", True)
        _, cases = jax_cases()
        import jax.numpy as jnp
        import jax
        conv, block = jnp.asarray, jax.block_until_ready
    f, names = cases[case]
    args = [conv(a) for a in load(d, *names)]
    out = [None]

    def once():
        out[0] = block(f(*args))
    ms = median_ms(once, REPS[case])
    def to_numpy(r):
        return r.detach().numpy() if hasattr(r, "detach") else np.asarray(r)
    r = out[0]
    if case == "adam_step" and lib == "jax":
        r = r[0]  # (parameters, first moments, second moments): the parameters are checked
    # sgd_step and adam_step return the six updated parameters: saved flattened, one after another (texpr_peer
    # does the same)
    r = np.concatenate([np.ravel(to_numpy(p)) for p in r]) if isinstance(r, (tuple, list)) else to_numpy(r)
    np.save(os.path.join(d, f"out_{lib}_{case}.npy"), r)
    print(f"median_ms {ms:.6f}")


def check(d, cases):
    """Every library's output against NumPy's float64 run of the same case (float32 inputs widened)."""
    import numpy as np
    _, ref_cases = numpy_cases(d)
    bad = 0
    for case in cases:
        if case in CONV_CASES:
            ref = conv_reference(case, d)
        else:
            f, names = ref_cases[case]
            ref = f(*[a.astype(np.float64) if a.dtype == np.float32 else a for a in load(d, *names)])
        ref = np.concatenate([np.ravel(p) for p in ref]) if isinstance(ref, tuple) else np.asarray(ref, np.float64)
        # sgd_step, adam_step: compare the updates, not the parameters (all six, flattened one after another)
        step = case in ("sgd_step", "adam_step")
        base = np.concatenate([np.ravel(p) for p in load(d, *PARAMS)]).astype(np.float64) if step else 0.0
        ref = ref - base
        scale = max(1e-30, float(np.max(np.abs(ref)))) if step else max(1.0, float(np.max(np.abs(ref))))
        for lib in ("texpr", "numpy", "torch", "jax"):
            p = os.path.join(d, f"out_{lib}_{case}.npy")
            if not os.path.exists(p):
                continue
            got = np.load(p).astype(np.float64) - base
            err = float(np.max(np.abs(got - ref))) / scale if got.shape == ref.shape else float("inf")
            # fused_sum: 2^24 float terms in any order; sgd_step: the update lr * dW relative to its own size.
            # cumsum: a float running sum of 2^24 terms (NumPy's own is sequential); einsum and bmm: 128-term products.
            tol = 2e-2 if case in ("fused_sum", "cumsum_flat", "cumsum_axis0", "cumsum_axis1") else (1e-3 if step else 1e-4)
            ok = err <= tol
            bad += not ok
            print(f"check {case:14s} {lib:6s} max |error| / max|ref| = {err:.2e} {'ok' if ok else 'MISMATCH'}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "make":
        make(sys.argv[2])
        make_family(sys.argv[2])
        make_linalg(sys.argv[2])
    elif cmd == "make_family":
        make_family(sys.argv[2])
    elif cmd == "make_linalg":
        make_linalg(sys.argv[2])
    elif cmd == "make_conv":
        make_conv(sys.argv[2])
    elif cmd == "run":
        run(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    else:
        check(sys.argv[2], sys.argv[3:] or CASES)
