"""A plain script whose jitted reshape fails, so the interpreter prints JAX's filtered traceback."""

import jax
import jax.numpy as jnp

jax.jit(lambda x: x.reshape(3, 5))(jnp.ones(4))
