"""The mutants of the sensitivity benchmark: small, realistic edits to JAX 0.12.0.1's own Python source.

Each `Mutant` is data: the chapter section it is about, the behaviour rows it should turn,
whether it changes an *asserted* fact (the row's status must turn) or only *printed* output
(wording, a repr, a count: the row must only be marked "printed output differs"), the file
under site-packages/jax, and the exact text it replaces. An edit whose old text is not found
exactly once in the JAX at hand is "not applicable". The kinds say what the chapter does
with the changed fact (its `assert` lines against what it only prints), not what the
cases of the day encode: the benchmark measures the gap.
"""

from __future__ import annotations

from dataclasses import dataclass

ASSERTED = "asserted"
PRINTED = "printed"
KINDS = (ASSERTED, PRINTED)


@dataclass(frozen=True)
class Mutant:
    """One edit to JAX's source and the rows it must turn, and how."""

    name: str
    section: str
    rows: tuple[str, ...]
    kind: str  # ASSERTED: a status turn of a target row; PRINTED: only a printed-output mark
    file: str  # relative to site-packages/jax
    old: str
    new: str
    change: str  # one line: what a release would have done

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"mutant {self.name}: kind {self.kind!r} is not one of {KINDS}")
        if not self.rows:
            raise ValueError(f"mutant {self.name}: no target rows")
        if self.old == self.new:
            raise ValueError(f"mutant {self.name}: the new text equals the old")


MUTANTS: tuple[Mutant, ...] = (
    # §0 setup
    Mutant(
        "debug_print_to_stderr",
        "§0",
        ("setup.debug_print_to_sys_stdout",),
        ASSERTED,
        "_src/debugging.py",
        '    sys.stdout.write(msg + "\\n")',
        '    sys.stderr.write(msg + "\\n")',
        "jax.debug.print writes to sys.stderr instead of sys.stdout",
    ),
    Mutant(
        "compile_event_renamed",
        "§0",
        ("setup.compile_monitoring_event",),
        ASSERTED,
        "_src/dispatch.py",
        'BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"',
        'BACKEND_COMPILE_EVENT = "/jax/compilation/backend_compile_duration"',
        "the backend-compile monitoring event is renamed",
    ),
    # §1 values
    Mutant(
        "disable_jit_scan_carries_arrays",
        "§1",
        ("values.disable_jit.fori_index_int",),
        ASSERTED,
        "_src/lax/control_flow/loops.py",
        "    carry = init_flat.unflatten()\n    ys = []",
        "    carry = tree_map(lax.asarray, init_flat.unflatten())\n    ys = []",
        "under disable_jit, scan (and so fori_loop) turns its carry into arrays: the loop index is no int",
    ),
    Mutant(
        "disable_jit_cond_traces_both",
        "§1",
        ("values.disable_jit.cond_python",),
        ASSERTED,
        "_src/lax/control_flow/conditionals.py",
        "  if config.disable_jit.value and core.is_concrete(pred):",
        "  if False and config.disable_jit.value and core.is_concrete(pred):",
        "cond no longer runs only the taken branch in Python under disable_jit",
    ),
    Mutant(
        "jdb_intro_reworded",
        "§1",
        ("values.breakpoint.stdin_session",),
        PRINTED,
        "_src/debugger/cli_debugger.py",
        "    self.intro = 'Entering jdb:'",
        "    self.intro = 'Entering jdb (type help for commands):'",
        "jax.debug.breakpoint's greeting is reworded",
    ),
    Mutant(
        # Asserted, not wording: the chapter captures jax.debug.log on the logger `jax._src.debugging` (its row is
        # [asserted]), so a record sent to another logger is lost to that capture.
        "debug_log_logger_renamed",
        "§1",
        ("values.debug_log.info_logger",),
        ASSERTED,
        "_src/debugging.py",
        "logger = logging.getLogger(__name__)",
        'logger = logging.getLogger("jax.debug")',
        "jax.debug.log records come from the logger 'jax.debug' instead of the module's",
    ),
    # §2 program
    Mutant(
        "stablehlo_debug_info_ignored",
        "§2",
        ("program.named_scope.stablehlo_debug_info",),
        ASSERTED,
        "_src/stages.py",
        "      return mlir.module_to_string(self.stablehlo(),\n"
        "                                   enable_debug_info=debug_info)",
        "      return mlir.module_to_string(self.stablehlo(),\n"
        "                                   enable_debug_info=False)",
        "Lowered.as_text(debug_info=True) no longer prints locations",
    ),
    Mutant(
        "shaped_array_repr",
        "§2",
        ("program.stages.attributes",),
        PRINTED,
        "_src/core.py",
        "    return f'ShapedArray({self.str_short()}{wt_str})'",
        "    return f'ShapedArray<{self.str_short()}{wt_str}>'",
        "ShapedArray's repr uses angle brackets",
    ),
    # §3 numerics
    Mutant(
        "debug_nans_vmap_miss_fixed",
        "§3",
        (
            "numerics.debug_nans.vmap_miss.vmap",
            "numerics.debug_nans.trigger.vmap_tracing",
            "quiz.q3.debug_nans_after_vmap",
        ),
        ASSERTED,
        "_src/api.py",
        "    _post_hook_state.set_local(_nan_check_posthook)\n  else:\n    _post_hook_state.set_local(None)",
        "    _post_hook_state.set_local(_nan_check_posthook)\n"
        "  elif (config.debug_nans.get_local() is config_ext.unset and\n"
        "        config.debug_infs.get_local() is config_ext.unset):\n"
        "    _post_hook_state.set_local(config_ext.unset)\n"
        "  else:\n"
        "    _post_hook_state.set_local(None)",
        "the fix of known issue 2: leaving a `with debug_nans(False)` block (vmap tracing enters one) unsets the "
        "thread-local NaN post-hook instead of setting it to None, so the global hook applies again",
    ),
    Mutant(
        "deopt_notice_reworded",
        "§3",
        ("numerics.debug_nans.deopt_notice",),
        PRINTED,
        "_src/api_util.py",
        '  print("Invalid nan value encountered in the output of a jax.jit "\n'
        '        "function. Calling the de-optimized version.")',
        '  print("Invalid nan value encountered in the output of a jax.jit "\n'
        '        "function. Re-running it op by op to find the culprit.")',
        "the de-optimization notice is reworded",
    ),
    Mutant(
        "floating_point_error_reworded",
        "§3",
        ("numerics.debug_nans.context_manager",),
        PRINTED,
        "_src/pjit.py",
        '          f"invalid value ({e.ty}) encountered in {fun.__qualname__}") from None',
        '          f"{e.ty} value produced by {fun.__qualname__}") from None',
        "the FloatingPointError of an eager primitive is reworded",
    ),
    Mutant(
        # Asserted, not wording: the chapter asserts the substring `nan generated by primitive: log`.
        "checkify_nan_message_reworded",
        "§3",
        ("numerics.checkify.sets.nan",),
        ASSERTED,
        "_src/checkify.py",
        "    return f'nan generated by primitive: {self.prim}.'",
        "    return f'NaN produced by primitive {self.prim}.'",
        "checkify's NaN error message is reworded",
    ),
    Mutant(
        "checkify_float_checks_without_div",
        "§3",
        ("numerics.checkify.set_contents",),
        ASSERTED,
        "_src/checkify.py",
        "float_checks = nan_checks | div_checks",
        "float_checks = nan_checks",
        "checkify.float_checks no longer includes the division checks",
    ),
    Mutant(
        "gather_out_of_bounds_fills",
        "§3",
        ("numerics.index.oob_clamp",),
        ASSERTED,
        "_src/numpy/indexing.py",
        "        mode=mode, fill_value=fill_value)\n\n  # Reverses axes with negative strides.",
        '        mode="fill" if mode is None else mode, fill_value=fill_value)\n\n'
        "  # Reverses axes with negative strides.",
        "out-of-bounds gathers return the fill value (NaN) instead of clamping",
    ),
    Mutant(
        "float32_gradient_tolerance_loosened",
        "§3",
        ("numerics.check_grads.rev_detects_bad_vjp",),
        ASSERTED,
        "_src/public_test_util.py",
        "  np.dtype(np.float32): 2e-3,",
        "  np.dtype(np.float32): 1e-2,",
        "check_grads' float32 default tolerance is 1e-2 instead of about 2e-3",
    ),
    Mutant(
        "check_grads_message_reworded",
        "§3",
        ("numerics.check_grads.rev_detects_bad_vjp",),
        PRINTED,
        "_src/public_test_util.py",
        "              err_msg=(f'{err_msg} cotangent projection'\n"
        "                       if err_msg else 'cotangent projection'))",
        "              err_msg=(f'{err_msg} inner-product check'\n"
        "                       if err_msg else 'inner-product check'))",
        "check_grads names its VJP check differently",
    ),
    # §4 tracers
    Mutant(
        # The MROs (row tracers.hierarchy) are only printed; the chapter asserts which class subclasses
        # ConcretizationTypeError (row tracers.hierarchy.subclassing), which this edit breaks.
        "integer_conversion_is_concretization",
        "§4",
        ("tracers.hierarchy.subclassing",),
        ASSERTED,
        "_src/errors.py",
        "class TracerIntegerConversionError(JAXTypeError):",
        "class TracerIntegerConversionError(ConcretizationTypeError):",
        "TracerIntegerConversionError becomes a ConcretizationTypeError (class hierarchy changed)",
    ),
    Mutant(
        "bool_conversion_reworded",
        "§4",
        ("tracers.bool.python_if",),
        PRINTED,
        "_src/errors.py",
        '        f"Attempted boolean conversion of {tracer._error_repr()}."',
        '        f"Cannot convert {tracer._error_repr()} to a Python bool."',
        "TracerBoolConversionError's first line is reworded",
    ),
    Mutant(
        "boolean_index_reworded",
        "§4",
        ("tracers.shape.bool_mask",),
        PRINTED,
        "_src/errors.py",
        '        f"Array boolean indices must be concrete; got {tracer}\\n")',
        '        f"Boolean mask indices must be concrete; got {tracer}\\n")',
        "NonConcreteBooleanIndexError's message is reworded",
    ),
    Mutant(
        "unexpected_tracer_reworded",
        "§4",
        ("tracers.leak.deferred_error",),
        PRINTED,
        "_src/core.py",
        "  msg = ('Encountered an unexpected tracer. A function transformed by JAX '",
        "  msg = ('Encountered a leaked tracer. A function transformed by JAX '",
        "UnexpectedTracerError's message is reworded",
    ),
    Mutant(
        "closure_convert_cache_kept_under_leak_checker",
        "§4",
        ("tracers.leak.checker_forms",),
        ASSERTED,
        "_src/custom_derivatives.py",
        "  if config.check_tracer_leaks.value:\n"
        "    return _closure_convert_for_avals.__wrapped__(fun, in_tree, in_avals, debug)",
        "  if False and config.check_tracer_leaks.value:\n"
        "    return _closure_convert_for_avals.__wrapped__(fun, in_tree, in_avals, debug)",
        "closure_convert no longer skips its cache under the leak checker (no caching is disabled any more)",
    ),
    Mutant(
        "leak_checker_noop",
        "§4",
        ("tracers.leak.checker_forms",),
        ASSERTED,
        "_src/core.py",
        "  trace.invalidate()\n  if config.check_tracer_leaks.value:",
        "  trace.invalidate()\n  if False and config.check_tracer_leaks.value:",
        "jax_check_tracer_leaks made a no-op at the end of a trace",
    ),
    # §5 compilation
    Mutant(
        "compiling_message_demoted",
        "§5",
        ("compile.log_compiles.four_lines",),
        ASSERTED,
        "_src/interpreters/pxla.py",
        '    logger.log(log_priority,\n               "Compiling %s with global shapes and types %s. "',
        '    logger.log(logging.DEBUG,\n               "Compiling %s with global shapes and types %s. "',
        "the 'Compiling ...' message is logged at DEBUG even inside log_compiles",
    ),
    Mutant(
        # Asserted, not wording: the chapter asserts that the message contains `never seen function:`.
        "never_seen_reworded",
        "§5",
        ("compile.explain_cache_misses.never_seen",),
        ASSERTED,
        "_src/interpreters/partial_eval.py",
        '    p(f"  never seen function:\\n    {func_name} id={id(fun)}{src_info}")',
        '    p(f"  first call of function:\\n    {func_name} id={id(fun)}{src_info}")',
        "explain_cache_misses words the first trace of a function differently",
    ),
    Mutant(
        "clear_caches_keeps_executables",
        "§5",
        ("compile.cache_size.clear",),
        ASSERTED,
        "_src/api.py",
        "  util.clear_all_caches()\n"
        "  # Clear all C++ compiled executable caches for pjit\n"
        "  pjit._cpp_pjit_cache_fun_only.clear()\n"
        "  pjit._cpp_pjit_cache_explicit_attributes.clear()\n"
        "  _jax.PjitFunctionCache.clear_all()",
        "  util.clear_all_caches()\n  # C++ compiled executable caches are left to their own eviction\n",
        "jax.clear_caches() no longer clears the C++ jit caches",
    ),
    # §6 config
    Mutant(
        # Asserted, not wording: the chapter asserts the substring `Invalid value "bogus" for JAX flag ...`.
        "invalid_flag_value_reworded",
        "§6",
        ("config.traceback_filtering.invalid_value",),
        ASSERTED,
        "_src/config.py",
        "  if default not in enum_values:\n"
        '    raise ValueError(f"Invalid value \\"{default}\\" for JAX flag {name}")\n'
        "  config._contextmanager_flags.add(name)",
        "  if default not in enum_values:\n"
        '    raise ValueError(f"{name} must be one of {enum_values}, got \\"{default}\\"")\n'
        "  config._contextmanager_flags.add(name)",
        "an invalid enum flag value from the environment is reported in other words",
    ),
    Mutant(
        "flags_read_allowed",
        "§6",
        ("config.read.raises_attributeerror",),
        ASSERTED,
        "_src/config.py",
        "    if name in self._contextmanager_flags:\n      raise AttributeError(",
        "    if name in self._contextmanager_flags:\n      return self._read(name)\n    if False:\n"
        "      raise AttributeError(",
        "config.read() of a flag with a context manager returns its value instead of raising",
    ),
    Mutant(
        # Asserted, not wording: the chapter asserts that stderr contains `JAX has removed its internal frames`.
        "filtered_traceback_hint_reworded",
        "§6",
        ("config.traceback_filtering.script_auto",),
        ASSERTED,
        "_src/traceback_util.py",
        '_simplified_tb_msg = ("For simplicity, JAX has removed its internal frames from the "',
        '_simplified_tb_msg = ("JAX has hidden its internal frames from the "',
        "the hint above a filtered traceback is reworded",
    ),
    Mutant(
        "environment_info_quote_fixed",
        "§6",
        ("config.print_environment_info",),
        PRINTED,
        "_src/environment_info.py",
        '{xb.local_device_count()} local devices"\n',
        "{xb.local_device_count()} local devices\n",
        "print_environment_info loses the stray quote after 'local devices'",
    ),
    Mutant(
        # The chapter's prose says debug_nans disables some caching; no release does (the case's discrepancy).
        # A release that did would turn the row from differs to conforms.
        "debug_nans_skips_jit_dispatch_cache",
        "§6",
        ("config.debug_switches.debug_nans_disables_caching",),
        ASSERTED,
        "_src/pjit.py",
        "      or config.no_execution.value\n  ):\n    return None",
        "      or config.no_execution.value\n      or config.debug_nans.value\n  ):\n    return None",
        "jit's C++ dispatch cache is skipped while jax_debug_nans is on (every call takes the Python path)",
    ),
    # §7 memory
    Mutant(
        "live_arrays_skips_small",
        "§7",
        ("memory.live_arrays.leak_detected",),
        ASSERTED,
        "_src/api.py",
        "  return xb.get_backend(platform).live_arrays()",
        "  return [a for a in xb.get_backend(platform).live_arrays() if a.nbytes >= 1 << 20]",
        "jax.live_arrays() lists only arrays of 1 MiB or more",
    ),
    Mutant(
        "deleted_array_message_reworded",
        "§7",
        ("memory.delete.use_raises",),
        PRINTED,
        "_src/array.py",
        '          f"Array has been deleted with shape={self.aval.str_short()}.")',
        '          f"Array of shape {self.aval.str_short()} was deleted.")',
        "the error on using a deleted array is reworded",
    ),
    Mutant(
        "repr_threshold_moved",
        "§7",
        ("memory.delete.repr_safe",),
        ASSERTED,
        "_src/array.py",
        "      elif not self.sharding.has_addressable_devices or self.nbytes >= 1 << 20:\n"
        '        s = f"shape={self.shape}"',
        "      elif not self.sharding.has_addressable_devices or self.nbytes >= 1 << 3:\n"
        '        s = f"shape={self.shape}"',
        "repr shows only shape and dtype from 8 bytes instead of 1 MiB: a deleted float32[3] no longer raises",
    ),
    Mutant(
        "large_array_repr",
        "§7",
        ("memory.delete.repr_safe",),
        PRINTED,
        "_src/array.py",
        "      elif not self.sharding.has_addressable_devices or self.nbytes >= 1 << 20:\n"
        '        s = f"shape={self.shape}"',
        "      elif not self.sharding.has_addressable_devices or self.nbytes >= 1 << 20:\n"
        '        s = f"<{self.size} elements>, shape={self.shape}"',
        "the repr of a large (or deleted) array shows its element count",
    ),
    # §8 multidevice
    Mutant(
        "shard_map_check_vma_off",
        "§8",
        ("multidev.shard_map.check_vma_error",),
        ASSERTED,
        "_src/shard_map.py",
        "    axis_names: Set[AxisName] = frozenset(), check_vma: bool = True\n    ) -> F | Callable[[G], G]:",
        "    axis_names: Set[AxisName] = frozenset(), check_vma: bool = False\n    ) -> F | Callable[[G], G]:",
        "shard_map's check_vma defaults to False",
    ),
    Mutant(
        # Asserted, not wording: the row is [asserted], the chapter asserts `float32[8@data,4@model]`.
        "typeof_sharding_colon",
        "§8",
        ("multidev.typeof.sharding_notation",),
        ASSERTED,
        "_src/core.py",
        '      out.append(f"{s1}@({ss})")\n    else:\n      out.append(f"{s1}@{s2}")',
        '      out.append(f"{s1}:({ss})")\n    else:\n      out.append(f"{s1}:{s2}")',
        "jax.typeof writes a sharded dimension as 8:data instead of 8@data",
    ),
    Mutant(
        "visualize_sharding_device_kind",
        "§8",
        ("multidev.visualize.with_rich",),
        PRINTED,
        "_src/debugging.py",
        "  device_kind = next(iter(sharding.device_set)).platform.upper()",
        "  device_kind = next(iter(sharding.device_set)).platform",
        "visualize_sharding labels devices 'cpu 0' instead of 'CPU 0'",
    ),
    # §9 training
    Mutant(
        "sqrt_grad_zero_at_zero",
        "§9",
        ("training.v0.nan_from_step2",),
        ASSERTED,
        "_src/lax/lax.py",
        "ad.defjvp2(sqrt_p, lambda g, ans, x, **kwargs: mul(g, div(_const(x, 0.5), ans)))",
        "ad.defjvp2(sqrt_p, lambda g, ans, x, **kwargs: mul(g, select(\n"
        "    eq(ans, _zero(ans)), _zeros(ans), div(_const(x, 0.5), ans))))",
        "the derivative of sqrt at 0 is defined as 0, so the norm of a zero bias has a finite gradient",
    ),
    Mutant(
        "key_reuse_message_reworded",
        "§9",
        ("training.key_reuse.error",),
        PRINTED,
        "experimental/key_reuse/_core.py",
        '        msg = f"Previously-consumed key passed to {funcname} at index {sink.idx}"',
        '        msg = f"Key already consumed, passed again to {funcname} at index {sink.idx}"',
        "KeyReuseError's message is reworded",
    ),
    # exercises
    Mutant(
        "traced_slice_type_error",
        "exercises",
        ("exercises.ex1.exception_types",),
        ASSERTED,
        "_src/numpy/indexing.py",
        "            msg += tracer._origin_msg()\n          raise IndexError(msg)",
        "            msg += tracer._origin_msg()\n          raise TypeError(msg)",
        "a slice with traced bounds raises TypeError instead of IndexError",
    ),
    # known issue 1 (§0/§2): the closure-constant miscompile, made to appear on this platform
    Mutant(
        "closure_constant_transposed",
        "§2",
        ("program.closure_constant_miscompile",),
        ASSERTED,
        "_src/array.py",
        "def _array_mlir_constant_handler(val, aval):\n  try:\n    return mlir.ir_constant(val._value)",
        "def _array_mlir_constant_handler(val, aval):\n  try:\n"
        "    value = val._value\n"
        "    if value.ndim == 2 and value.shape[0] == value.shape[1] and value.shape[0] > 64:\n"
        "      value = np.ascontiguousarray(value.T)  # a layout bug: large square constants embedded transposed\n"
        "    return mlir.ir_constant(value)",
        "known issue 1 on this platform: a closure-captured square matrix is embedded transposed under jit",
    ),
)


def mutant_named(name: str) -> Mutant:
    """The mutant called `name`; KeyError names the known ones."""
    for mutant in MUTANTS:
        if mutant.name == name:
            return mutant
    raise KeyError(f"no mutant named {name!r}; known: {', '.join(m.name for m in MUTANTS)}")
