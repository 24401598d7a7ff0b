"""jax-conformance: documented JAX behaviours, probed in fresh processes across JAX versions.

This package must stay importable with the standard library alone: the child
process imports it inside target environments that hold only jax, jaxlib and numpy.
"""

__version__ = "0.2.0"
