"""Code that runs inside the target environment (standard library, numpy and jax only)."""
