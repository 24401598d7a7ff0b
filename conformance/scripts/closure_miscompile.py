"""The chapter's closure-constant miscompile program (known issue 1), as a function and as a script.

Imported, `measure(jax)` returns the jitted closure's error, the eager error and the compiled HLO text of the
jitted closure. Run as a script (in a process of its own, so that XLA_FLAGS set for it take effect), it prints
one JSON line `{"jit_error": ...}` (NaN and ±inf written as JSON's extension words, which json.loads reads).
"""

import json


def measure(jax):
    """(jit error, eager error, compiled HLO text or None) of vmap(lambda x: sum(W @ x)) with W captured."""
    import jax.numpy as jnp
    import numpy as np

    weights = jax.random.normal(jax.random.key(1), (128, 128)) / jnp.sqrt(128.0)
    inputs = jax.random.normal(jax.random.key(2), (50, 128))
    reference = (np.asarray(weights, np.float64) @ np.asarray(inputs, np.float64).T).sum(0)

    def summed_products(batch):
        return jax.vmap(lambda x: jnp.sum(weights @ x))(batch)  # weights captured by closure

    def max_error(values):
        return float(np.abs(np.asarray(values, np.float64) - reference).max())

    jitted = jax.jit(summed_products)
    jit_error = max_error(jitted(inputs))
    with jax.disable_jit():
        eager_error = max_error(summed_products(inputs))
    try:
        hlo = jitted.lower(inputs).compile().as_text()
    except Exception:  # noqa: BLE001 - the HLO is a detail; a release without it still measures the errors
        hlo = None
    return jit_error, eager_error, hlo


if __name__ == "__main__":
    import jax

    print(json.dumps({"jit_error": measure(jax)[0]}))
