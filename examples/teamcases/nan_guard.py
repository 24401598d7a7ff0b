"""Our NaN guard: we rely on `jax_debug_nans` to stop training on the first NaN (a worked example of --cases)."""

from conformance.core.case import Expect, Observation, Section

SECTION = Section("Team §1", "Our NaN guard")


@SECTION.case(
    rows=["nan_guard.after_vmap"],
    claim="A jit wrapper compiled before vmap was traced lets a NaN through even with jax_debug_nans on "
    "(our known issue: we call jax.clear_caches() after every vmap as a workaround).",
    expect=Expect({"nan_from_old_wrapper": "missed", "nan_from_new_wrapper": "caught"}),
    known_issue=True,
    fresh_interpreter="jax_debug_nans and the compilation caches are process-global",
)
def nan_guard_after_vmap():
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_debug_nans", True)
    old = jax.jit(lambda x: jnp.log(x))
    old(jnp.array(2.0)).block_until_ready()
    jax.vmap(lambda x: x * 2)(jnp.ones(3)).block_until_ready()
    seen = {}
    for name, make_nan in (
        ("nan_from_old_wrapper", lambda: old(jnp.array(-1.0))),
        ("nan_from_new_wrapper", lambda: jax.jit(lambda x: jnp.sqrt(x))(jnp.array(-1.0))),
    ):
        try:
            make_nan().block_until_ready()
            seen[name] = "missed"
        except FloatingPointError:
            seen[name] = "caught"
    return Observation(seen)


@SECTION.case(
    rows=["nan_guard.error_class"],
    claim="A runtime failure of a compiled computation is a jax.errors.JaxRuntimeError, which our handler catches.",
    expect=Expect({"has_jax_runtime_error": True}),
)
def runtime_error_class():
    import jax

    return Observation({"has_jax_runtime_error": hasattr(jax.errors, "JaxRuntimeError")})
