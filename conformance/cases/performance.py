"""Performance workloads: patterns JAX users run and report speed, memory and compile regressions on.

Each builder returns `(fn, args)`: `jax-conformance perf` jits `fn` and measures it per release (compilations,
memory analysis, optimized HLO, compile and steady-state run time). `run` never runs them. Sizes keep every
workload well under 10 s per release on a 2-core machine.
"""

from __future__ import annotations

from conformance.core.case import Section

SECTION = Section("§P", "Performance")


def small_weight_and_batch(weight_seed: int, batch_seed: int, batch: int):
    """The inputs scan_grad and vmap_grad share: a 32x32 weight (normal x 0.1, from `weight_seed`) and `batch`
    32-vectors (normal, from `batch_seed`)."""
    import jax

    w = jax.random.normal(jax.random.PRNGKey(weight_seed), (32, 32)) * 0.1
    xs = jax.random.normal(jax.random.PRNGKey(batch_seed), (batch, 32))
    return w, xs


@SECTION.workload(
    rows=["perf.mlp_train_step"],
    claim="An MLP training step: forward pass, loss, grad, and an SGD-with-momentum update of every parameter.",
)
def mlp_train_step():
    import jax
    import jax.numpy as jnp

    sizes = [64, 256, 256, 10]
    keys = jax.random.split(jax.random.PRNGKey(0), len(sizes))
    params = [(jax.random.normal(k, (a, b)) * 0.05, jnp.zeros(b)) for k, a, b in zip(keys, sizes, sizes[1:])]
    momentum = jax.tree_util.tree_map(jnp.zeros_like, params)
    x, y = jax.random.normal(keys[-1], (128, 64)), jnp.arange(128) % 10

    def loss(params, x, y):
        for w, b in params[:-1]:
            x = jnp.tanh(x @ w + b)
        logits = x @ params[-1][0] + params[-1][1]
        return -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(y.shape[0]), y])

    def step(params, momentum, x, y):
        grads = jax.grad(loss)(params, x, y)
        momentum = jax.tree_util.tree_map(lambda m, g: 0.9 * m + g, momentum, grads)
        params = jax.tree_util.tree_map(lambda p, m: p - 0.01 * m, params, momentum)
        return params, momentum

    return step, (params, momentum, x, y)


@SECTION.workload(
    rows=["perf.scan_grad"],
    claim="The gradient of a loss through lax.scan over 200 steps of a small recurrent cell.",
)
def scan_grad():
    import jax
    import jax.numpy as jnp

    w, xs = small_weight_and_batch(weight_seed=1, batch_seed=2, batch=200)

    def loss(w, xs):
        def cell(h, x):
            h = jnp.tanh(h @ w + x)
            return h, jnp.sum(h**2)

        _, out = jax.lax.scan(cell, jnp.zeros(32), xs)
        return jnp.sum(out)

    return jax.grad(loss), (w, xs)


@SECTION.workload(
    rows=["perf.scan_linearize"],
    claim="jax.linearize of a lax.scan, then the linear map applied: forward-mode through a loop.",
)
def scan_linearize():
    import jax
    import jax.numpy as jnp

    xs = jax.random.normal(jax.random.PRNGKey(3), (100, 64))

    def run(c):
        def body(carry, x):
            carry = jnp.sin(carry) * x + carry
            return carry, carry.sum()

        return jax.lax.scan(body, c, xs)[1]

    def linearized(c, t):
        _, f_jvp = jax.linearize(run, c)
        return f_jvp(t)

    return linearized, (jnp.ones(64), jnp.ones(64))


@SECTION.workload(
    rows=["perf.while_loop"],
    claim="A lax.while_loop of a few thousand small iterations (a Newton iteration to a tolerance).",
)
def while_loop():
    import jax
    import jax.numpy as jnp

    def newton(a):
        def cond(state):
            i, x = state
            return (i < 3000) & (jnp.max(jnp.abs(x * x - a)) > 0.0)

        def body(state):
            i, x = state
            return i + 1, 0.5 * (x + a / x) + 1e-7 * jnp.sin(x)

        return jax.lax.while_loop(cond, body, (0, a))[1]

    return newton, (jnp.linspace(1.0, 100.0, 256),)


@SECTION.workload(
    rows=["perf.conv_net_step"],
    claim="A convolution net training step: two conv layers, pooling, a dense head, grad and update.",
)
def conv_net_step():
    import jax
    import jax.numpy as jnp

    k1, k2, k3, k4 = jax.random.split(jax.random.PRNGKey(4), 4)
    params = {
        "c1": jax.random.normal(k1, (3, 3, 3, 8)) * 0.1,
        "c2": jax.random.normal(k2, (3, 3, 8, 16)) * 0.1,
        "d": jax.random.normal(k3, (16 * 8 * 8, 10)) * 0.01,
    }
    x = jax.random.normal(k4, (16, 32, 32, 3))
    y = jnp.arange(16) % 10
    dims = ("NHWC", "HWIO", "NHWC")

    def loss(p, x, y):
        h = jax.nn.relu(jax.lax.conv_general_dilated(x, p["c1"], (1, 1), "SAME", dimension_numbers=dims))
        h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        h = jax.nn.relu(jax.lax.conv_general_dilated(h, p["c2"], (1, 1), "SAME", dimension_numbers=dims))
        h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        logits = h.reshape(h.shape[0], -1) @ p["d"]
        return -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(y.shape[0]), y])

    def step(p, x, y):
        grads = jax.grad(loss)(p, x, y)
        return jax.tree_util.tree_map(lambda a, g: a - 0.01 * g, p, grads)

    return step, (params, x, y)


@SECTION.workload(
    rows=["perf.elementwise_fusion"],
    claim="A chain of elementwise ops and reductions over one array, which XLA fuses into few kernels.",
)
def elementwise_fusion():
    import jax.numpy as jnp

    def chain(x):
        y = jnp.exp(-x * x) * jnp.cos(3.0 * x) + jnp.tanh(x) / (1.0 + x * x)
        y = jnp.where(y > 0, y, 0.1 * y)
        z = (y - y.mean(axis=1, keepdims=True)) / (y.std(axis=1, keepdims=True) + 1e-5)
        return jnp.sum(z * z, axis=0) + jnp.max(z, axis=0)

    return chain, (jnp.linspace(-3.0, 3.0, 512 * 512).reshape(512, 512),)


@SECTION.workload(
    rows=["perf.vmap_grad"],
    claim="Per-example gradients: vmap of grad of a small model's loss over a batch.",
)
def vmap_grad():
    import jax
    import jax.numpy as jnp

    w, xs = small_weight_and_batch(weight_seed=5, batch_seed=6, batch=256)

    def loss(w, x):
        return jnp.sum(jnp.tanh(jnp.tanh(x @ w) @ w) ** 2)

    return jax.vmap(jax.grad(loss), in_axes=(None, 0)), (w, xs)


@SECTION.workload(
    rows=["perf.sort_top_k"],
    claim="A full sort, an argsort and lax.top_k of a large vector.",
)
def sort_top_k():
    import jax
    import jax.numpy as jnp

    def ranks(x):
        values, indices = jax.lax.top_k(x, 64)
        return jnp.sort(x)[-1] + values.sum() + jnp.argsort(x)[0] + indices.sum()

    return ranks, (jax.random.normal(jax.random.PRNGKey(7), (1 << 17,)),)


@SECTION.workload(
    rows=["perf.fft"],
    claim="A 2-D FFT, a pointwise filter and the inverse FFT of a 256x256 image batch.",
)
def fft():
    import jax
    import jax.numpy as jnp

    def filtered(x):
        f = jnp.fft.fft2(x)
        return jnp.real(jnp.fft.ifft2(f * jnp.exp(-jnp.abs(f) * 1e-3)))

    return filtered, (jax.random.normal(jax.random.PRNGKey(8), (4, 256, 256)),)


@SECTION.workload(
    rows=["perf.prng_sampling"],
    claim="PRNG sampling: split a key and draw normal, uniform and categorical samples (threefry).",
)
def prng_sampling():
    import jax
    import jax.numpy as jnp

    def sample(key):
        k1, k2, k3 = jax.random.split(key, 3)
        n = jax.random.normal(k1, (256, 256))
        u = jax.random.uniform(k2, (256, 256))
        c = jax.random.categorical(k3, jnp.zeros((256, 16)))
        return n.sum() + u.sum() + c.sum()

    return sample, (jax.random.PRNGKey(9),)


@SECTION.workload(
    rows=["perf.dispatch_loop"],
    claim="A Python loop of 100 small jitted calls, each on a tiny array: the cost of dispatch per call.",
    jit=False,
)
def dispatch_loop():
    import jax
    import jax.numpy as jnp

    @jax.jit
    def small(x, y):
        return x * y + 1.0

    def loop(x):
        for _ in range(100):
            x = small(x, 0.999)
        return x

    return loop, (jnp.ones(8),)


@SECTION.workload(
    rows=["perf.compile_heavy"],
    claim="A compile-heavy function: an unrolled Python loop of 150 small ops traced into one program.",
)
def compile_heavy():
    import jax.numpy as jnp

    def unrolled(x):
        for i in range(50):
            x = jnp.sin(x) * (1.0 + i * 1e-3)
            x = x + jnp.roll(x, i % 7)
            x = x / (1.0 + jnp.abs(x).max())
        return x

    return unrolled, (jnp.linspace(0.0, 1.0, 1024),)


@SECTION.workload(
    rows=["perf.memory_bound"],
    claim="A memory-bound pass: axpy and a transpose-add over 32 MB arrays, little arithmetic per byte.",
)
def memory_bound():
    import jax.numpy as jnp

    def stream(x, y):
        return 2.0 * x + y + x.T

    x = jnp.ones((2048, 2048), jnp.float32)
    return stream, (x, x * 0.5)
