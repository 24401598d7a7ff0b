"""The cases, one module per chapter section; each module declares its probes with `conformance.core.case.case`.

Case modules import nothing but the standard library and `conformance.core.case` at
module level; jax is imported inside each probe, after the child's environment is set.
"""
