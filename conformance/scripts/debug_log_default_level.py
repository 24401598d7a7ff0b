"""Emit one `jax.debug.log` record from a jitted function with logging left as `import jax` configures it.

Run as a whole script so that whatever handlers JAX installs on its loggers write to this process's real
stderr; the caller reads stderr. The first stdout line reports the debug logger's effective level.
"""

import logging

import jax
import jax.numpy as jnp

debug_logger = logging.getLogger("jax._src.debugging")
print("effective_level", logging.getLevelName(debug_logger.getEffectiveLevel()), flush=True)


@jax.jit
def halve_and_log(x):
    jax.debug.log("halving {x:.2f}", x=x)
    return x / 2


jax.block_until_ready(halve_and_log(jnp.float32(0.75)))
jax.effects_barrier()
print("done", flush=True)
