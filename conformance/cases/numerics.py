"""§3 of the chapter: finding NaNs, and known issue 2 (jax_debug_nans misses NaNs once vmap was traced)."""

from conformance.core.case import Expect, Observation, Param, Section, Unsupported

SECTION = Section("§3", "Numerics")

ALL_CAUGHT = {"old_jit": "caught", "old_eager_log": "caught", "new_eager_sqrt": "caught", "new_jit": "caught"}


@SECTION.case(
    subsection="3.1",
    claim="With jax_debug_nans switched on by config.update, one unrelated vmap stops the NaN checks on "
          "computations that already ran; clear_caches() or the debug_nans context manager avoid it.",
    params=[
        Param("none", rows=["numerics.debug_nans.vmap_miss.none"], expect=Expect(ALL_CAUGHT)),
        Param("vmap", rows=["numerics.debug_nans.vmap_miss.vmap"], known_issue=True,
              expect=Expect({"old_jit": "missed", "old_eager_log": "missed",
                             "new_eager_sqrt": "caught", "new_jit": "caught"})),
        Param("clear", rows=["numerics.debug_nans.vmap_miss.clear"], expect=Expect(ALL_CAUGHT)),
        Param("with", rows=["numerics.debug_nans.vmap_miss.with"], expect=Expect(ALL_CAUGHT)),
    ],
    fresh_interpreter="the process must never have traced vmap before the probe",
    notes="Each mode runs in its own fresh process, which must not have traced vmap before the probe. "
          "'missed' means the NaN came back without an exception. Measured here on linux-x86_64: the miss "
          "first shows in 0.8.x (0.7.2 and older catch all four); in 0.5.3 and 0.6.2 the 'with' child writes "
          "its observation (all caught) and then dies by SIGSEGV during interpreter shutdown, with the "
          "context manager still entered; in 0.4.38 the 'with' form checks nothing at all.",
)
def debug_nans_vmap_miss(mode):
    import jax
    import jax.numpy as jnp

    if mode == "with":
        if not hasattr(jax, "debug_nans"):
            raise Unsupported("jax.debug_nans (the context manager) does not exist")
        jax.debug_nans(True).__enter__()  # on for the rest of the process
    else:
        jax.config.update("jax_debug_nans", True)

    old_jit = jax.jit(lambda x: jnp.log(x))  # a wrapper of its own, not jnp.log's cache
    old_jit(jnp.array(2.0)).block_until_ready()
    jnp.log(jnp.array(2.0)).block_until_ready()
    if mode in ("vmap", "clear", "with"):
        jax.vmap(lambda x: x * 2)(jnp.ones(3)).block_until_ready()
    if mode == "clear":
        jax.clear_caches()

    nan_makers = {
        "old_jit": lambda: old_jit(jnp.array(-1.0)),
        "old_eager_log": lambda: jnp.log(jnp.array(-1.0)),
        "new_eager_sqrt": lambda: jnp.sqrt(jnp.array(-1.0)),
        "new_jit": lambda: jax.jit(lambda x: jnp.arccos(x))(jnp.array(3.0)),
    }
    verdicts, messages = {}, {}
    for name, make_nan in nan_makers.items():
        try:
            make_nan().block_until_ready()
            verdicts[name] = "missed"
        except FloatingPointError as exc:
            verdicts[name] = "caught"
            messages[name] = str(exc).splitlines()[0]
    return Observation(verdicts, {"messages": messages})
