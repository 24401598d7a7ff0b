"""§8 of the chapter: four simulated CPU devices: sharding notation, layouts, sharding inside jit, shard_map checks."""

from conformance.core.case import Change, Expect, Observation, Param, Section, Unsupported
from conformance.cases.helpers import outcome_of, printed_lines, require, require_keyword

SECTION = Section("§8", "Multiple devices")

# The chapter's §8 runs on four simulated CPU devices; JAX_PLATFORMS pins the CPU backend, so that on a GPU or TPU
# build jax.devices() is still these four CPUs rather than the accelerator.
FOUR_DEVICES = {"XLA_FLAGS": "--xla_force_host_platform_device_count=4", "JAX_PLATFORMS": "cpu"}


def _grid_arrays():
    """The chapter's 8x4 arange(32.) placed on a 2x2 ("data", "model") mesh three ways."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P

    mesh = jax.make_mesh((2, 2), ("data", "model"))
    values = jnp.arange(32.0).reshape(8, 4)
    return mesh, {
        "P('data','model')": jax.device_put(values, NamedSharding(mesh, P("data", "model"))),
        "P()": jax.device_put(values, NamedSharding(mesh, P())),
        "P(None,'model')": jax.device_put(values, NamedSharding(mesh, P(None, "model"))),
    }


def _block_grid(x):
    """The 2-D grid of blocks of `x`, each cell labelled "CPU <ids>" with the devices holding that block."""
    holders = {}
    for device, index in x.sharding.devices_indices_map(x.shape).items():
        corner = tuple(s.indices(n)[0] for s, n in zip(index, x.shape))
        holders.setdefault(corner, []).append(device.id)
    rows = sorted({corner[0] for corner in holders})
    cols = sorted({corner[1] for corner in holders})
    return [["CPU " + ",".join(map(str, sorted(holders[(r, c)]))) for c in cols] for r in rows]


def _mesh_axis_types(mesh):
    return str(getattr(mesh, "axis_types", None))


@SECTION.case(
    rows=["multidev.force_device_count"],
    claim="With the host-platform device count flag set to 4 before JAX starts, JAX sees four CPU devices.",
    env=FOUR_DEVICES,
    expect=Expect({"devices": 4}),
)
def forced_device_count():
    import jax

    return Observation({"devices": len(jax.devices())}, {"devices": [str(d) for d in jax.devices()]})


@SECTION.case(
    subsection="8.1",
    rows=["multidev.typeof.sharding_notation"],
    claim="jax.typeof writes a dimension sharded over a mesh axis as size@axis and leaves replicated or "
    "unsharded dimensions bare.",
    env=FOUR_DEVICES,
    expect=Expect(
        {
            "typeof": {
                "P('data','model')": "float32[8@data,4@model]",
                "P()": "float32[8,4]",
                "P(None,'model')": "float32[8,4@model]",
                "unsharded ones(3)": "float32[3]",
            }
        }
    ),
    notes="The @ notation shows for Explicit mesh axes; jax.make_mesh creates Explicit axes by default in "
    "0.12 (0.8.3 warns that the default changes from Auto in 0.9 and shows float32[8,4] for every "
    "layout). The mesh's axis types are in details.",
    changes=[
        Change(
            since="0.5.3",
            why="jax.typeof first exists in 0.5.3, but it shows no @ sharding notation while make_mesh's axes "
            "default to Auto, and 0.5.3 and 0.6.0 print every type as ShapedArray(...), an unsharded "
            "array's included (0.6.1 drops the wrapper).",
            evidence="measured (all run, linux-x86_64): 0.5.2 has no jax.typeof (unsupported); 0.5.3 shows "
            "ShapedArray(float32[8,4]) for each layout and ShapedArray(float32[3]) for the unsharded "
            "ones(3), 0.6.1 float32[8,4] and float32[3]",
        ),
        Change(
            since="0.9.0",
            why="From 0.9.0 jax.make_mesh creates Explicit axes by default, so jax.typeof shows the @ sharding "
            "notation.",
            evidence="CHANGELOG 0.8.1: Default axis_types of jax.make_mesh will change in JAX v0.9.0 to return "
            "jax.sharding.AxisType.Explicit; measured (all run, linux-x86_64): 0.8.3 float32[8,4], 0.9.0 "
            "float32[8@data,4@model]",
        ),
    ],
)
def typeof_sharding_notation():
    import jax.numpy as jnp

    typeof = require("jax.typeof")
    mesh, arrays = _grid_arrays()
    notation = {name: str(typeof(x)) for name, x in arrays.items()}
    notation["unsharded ones(3)"] = str(typeof(jnp.ones(3)))
    return Observation({"typeof": notation}, {"mesh_axis_types": _mesh_axis_types(mesh)})


@SECTION.case(
    subsection="8.1",
    rows=["multidev.sharding.spec_and_local_shape"],
    claim="A sharded array's first addressable shard holds a 4x2 local block of the 8x4 array, and its "
    "sharding's spec is a PartitionSpec over ('data', 'model').",
    env=FOUR_DEVICES,
    expect=Expect({"local_shape": [4, 2], "spec_entries": ["data", "model"]}, printed={"spec": "P('data', 'model')"}),
    notes="Asserted: the local block's shape, [4, 2] (the chapter's assert), and the spec's entries (the table "
    "says x.sharding.spec is the PartitionSpec). Printed: str(spec), P('data', 'model') in the chapter; "
    "before the P(...) repr it printed as PartitionSpec('data', 'model') (measured on 0.4.38 and 0.8.3).",
)
def spec_and_local_shape():
    _, arrays = _grid_arrays()
    x = arrays["P('data','model')"]
    shard = x.addressable_shards[0]
    return Observation(
        {"local_shape": list(shard.data.shape), "spec_entries": list(x.sharding.spec), "spec": str(x.sharding.spec)},
        {"first_shard_device": str(shard.device), "first_shard_index": str(shard.index)},
    )


@SECTION.case(
    subsection="8.1",
    claim="visualize_array_sharding draws the layout when rich can be imported, and raises a ValueError saying "
    "it requires rich when rich is blocked before JAX is imported.",
    params=[
        Param(
            "with_rich",
            rows=["multidev.visualize.with_rich"],
            expect=Expect(
                {"rich_importable": True, "visualize": "ok"},
                printed={"label_rows": [["CPU 0", "CPU 1"], ["CPU 2", "CPU 3"]]},
            ),
        ),
        Param(
            "without_rich",
            rows=["multidev.visualize.without_rich"],
            expect=Expect(
                {
                    "rich_blocked_before_jax_import": True,
                    "visualize": "ValueError: `visualize_sharding` requires `rich` to be installed.",
                }
            ),
            fresh_interpreter="rich must be blocked before jax is imported, as the chapter does; a forked "
            "child inherits a server that has imported jax already",
        ),
    ],
    env=FOUR_DEVICES,
    notes="Asserted, as the chapter asserts them: with rich, the call returns (conditional on rich being "
    "importable, which is asserted too: rich 15 is in every target environment, as in the chapter); "
    "without rich, the exact error line. Printed: the drawing, compared as its CPU labels per row. For "
    "without_rich the probe runs in a newly started interpreter and puts None into sys.modules['rich'] "
    "before its first `import jax`, as the chapter's script does; it records that jax was not yet "
    "imported then; that rich can no longer be imported is the probe's own doing, so it is a detail, not a "
    "fact. The drawing's box characters depend on "
    "rich's colour detection, so only the labels are compared.",
)
def visualize_sharding(availability):
    import importlib.util
    import re
    import sys

    jax_imported_before = "jax" in sys.modules
    rich_loaded_before = "rich" in sys.modules
    if availability == "without_rich":
        sys.modules["rich"] = None
    import jax

    rich_importable = importlib.util.find_spec("rich") is not None
    _, arrays = _grid_arrays()
    lines = []
    drawn = outcome_of(
        lambda: lines.extend(printed_lines(lambda: jax.debug.visualize_array_sharding(arrays["P('data','model')"])))
    )
    label_rows = [re.findall(r"CPU \d+(?:,\d+)*", line) for line in lines if "CPU" in line]
    facts = {"visualize": "ok" if drawn.raised is None else f"{drawn.raised}: {drawn.exception}"}
    if availability == "without_rich":
        facts["rich_blocked_before_jax_import"] = not jax_imported_before
    else:
        facts["rich_importable"] = rich_importable
        facts["label_rows"] = label_rows
    return Observation(
        facts,
        {
            "rich_importable": rich_importable,
            "jax_imported_before_probe": jax_imported_before,
            "rich_loaded_before_probe": rich_loaded_before,
            "drawing": lines,
            "label_rows": label_rows,
        },
    )


@SECTION.case(
    subsection="8.1",
    rows=["multidev.devices_indices_map.layout"],
    claim="devices_indices_map gives each device's slice; grouping devices by slice shows a 2x2 grid of "
    "single devices for P('data','model'), two column blocks on devices 0,2 and 1,3 for "
    "P(None,'model'), and one block on all four devices for P().",
    env=FOUR_DEVICES,
    expect=Expect(
        {"labels_present": {"CPU 0,2": True, "CPU 0,1,2,3": True}},
        printed={
            "blocks": {
                "P('data','model')": [["CPU 0", "CPU 1"], ["CPU 2", "CPU 3"]],
                "P()": [["CPU 0,1,2,3"]],
                "P(None,'model')": [["CPU 0,2", "CPU 1,3"]],
            }
        },
    ),
    notes="Asserted, as the chapter asserts it: the diagrams contain the labels CPU 0,2 (a column block held "
    "by two devices) and CPU 0,1,2,3 (the replicated array). Printed: the three full diagrams, compared "
    "as their grids of labels. The grid is built by a private helper (_block_grid), as the chapter's "
    "ascii_sharding is, from devices_indices_map alone; it does not need rich.",
)
def devices_indices_map_layout():
    _, arrays = _grid_arrays()
    indices = {
        name: {str(d.id): str(i) for d, i in x.sharding.devices_indices_map(x.shape).items()}
        for name, x in arrays.items()
    }
    blocks = {name: _block_grid(x) for name, x in arrays.items()}
    labels = {label for grid in blocks.values() for row in grid for label in row}
    return Observation(
        {"labels_present": {label: label in labels for label in ("CPU 0,2", "CPU 0,1,2,3")}, "blocks": blocks},
        {"indices": indices},
    )


@SECTION.case(
    subsection="8.2",
    claim="Inside jit, jax.typeof of a P('d')-sharded argument shows its sharding at trace time, "
    "inspect_array_sharding hands the compiler's choice for an intermediate to its callback once, at "
    "compile time, and the output keeps the propagated sharding.",
    params=[
        Param(
            "typeof_at_trace",
            rows=["multidev.jit.typeof_at_trace"],
            expect=Expect({"typeof_at_trace": "float32[8@d,2]"}),
        ),
        Param(
            "inspect_callback",
            rows=["multidev.inspect_array_sharding.callback"],
            expect=Expect({"inspected_specs": ["P('d',)"]}),
        ),
        Param(
            "output_sharding",
            rows=["multidev.jit.output_sharding"],
            expect=Expect(
                {"output_typeof": "float32[8@d]", "output_spec_entries": ["d"]}, printed={"output_spec": "P('d',)"}
            ),
        ),
    ],
    env=FOUR_DEVICES,
    notes="Asserted, as the chapter asserts them: the typeof at trace time, the spec string the callback sees "
    "(the chapter asserts str(s.spec) == \"P('d',)\"; 'once, at compile time' is its prose), the "
    "output's typeof, and the output spec's entries (the prose: it keeps the propagated sharding). "
    "Printed: str(out.sharding.spec), P('d',). The function is called twice; inspected_specs lists every "
    "callback call, so a second call (a callback per run rather than per compilation) shows as a second "
    "entry. Measured: 0.8.3 prints specs as "
    "PartitionSpec('d',) and, with Auto mesh axes, typeof shows no @; 0.4.38 has no jax.typeof and hands "
    "the callback a PositionalSharding, which has no spec.",
    changes=[
        Change(
            since="0.5.3",
            params=("typeof_at_trace", "output_sharding"),
            why="jax.typeof first exists in 0.5.3, but it shows no @ sharding notation while make_mesh's axes "
            "default to Auto, and 0.5.3 and 0.6.0 print every type as ShapedArray(...), sharded or not "
            "(0.6.1 drops the wrapper).",
            evidence="measured (all run, linux-x86_64): 0.5.2 has no jax.typeof (unsupported); 0.5.3 shows "
            "ShapedArray(float32[8,2]) at trace time and ShapedArray(float32[8]) for the output, 0.6.1 "
            "float32[8,2] and float32[8]",
        ),
        Change(
            since="0.9.0",
            params=("typeof_at_trace", "output_sharding"),
            why="From 0.9.0 jax.make_mesh creates Explicit axes by default, so jax.typeof shows the @ sharding "
            "notation.",
            evidence="CHANGELOG 0.8.1: Default axis_types of jax.make_mesh will change in JAX v0.9.0 to return "
            "jax.sharding.AxisType.Explicit; measured (all run, linux-x86_64): 0.8.3 float32[8,2], 0.9.0 "
            "float32[8@d,2]",
        ),
        Change(
            since="0.9.1",
            params=("inspect_callback",),
            why="From 0.9.1 a PartitionSpec prints as `P('d',)`, the chapter's text; 0.9.0.1 prints "
            "`PartitionSpec('d',)`.",
            evidence="measured (all run, linux-x86_64): inspected_specs[0] PartitionSpec('d',) in 0.9.0.1, P('d',) "
            "in 0.9.1",
        ),
    ],
)
def sharding_inside_jit(view):
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P

    typeof = getattr(jax, "typeof", None)
    if typeof is None and view != "inspect_callback":
        raise Unsupported("jax.typeof")
    mesh = jax.make_mesh((4,), ("d",))
    x = jax.device_put(jnp.arange(16.0).reshape(8, 2), NamedSharding(mesh, P("d")))
    seen = {"inspected_specs": []}

    def on_sharding(sharding):
        spec = getattr(sharding, "spec", None)
        seen["inspected_specs"].append(str(spec) if spec is not None else f"{type(sharding).__name__} (no spec)")

    @jax.jit
    def f(a):
        if typeof is not None:
            seen["typeof_at_trace"] = str(typeof(a))
        b = jnp.sin(a) * 2
        jax.debug.inspect_array_sharding(b, callback=on_sharding)
        return b.sum(axis=1)

    out = jax.block_until_ready(f(x))
    jax.block_until_ready(f(x))
    details = {"mesh_axis_types": _mesh_axis_types(mesh)}
    if view == "typeof_at_trace":
        return Observation({"typeof_at_trace": seen["typeof_at_trace"]}, details)
    if view == "inspect_callback":
        return Observation({"inspected_specs": seen["inspected_specs"]}, details)
    return Observation(
        {
            "output_typeof": str(typeof(out)),
            "output_spec_entries": list(out.sharding.spec),
            "output_spec": str(out.sharding.spec),
        },
        {**details, "inspected_specs": seen["inspected_specs"]},
    )


def _replicas(arr):
    """The host copy of each addressable shard, and whether they are all identical."""
    import numpy as np

    datas = [np.asarray(s.data) for s in arr.addressable_shards]
    return [d.tolist() for d in datas], all(np.array_equal(datas[0], d) for d in datas[1:])


@SECTION.case(
    subsection="8.3",
    claim="shard_map's default check_vma rejects at trace time a per-device sum declared replicated; with "
    "check_vma=False it returns device 0's partial sum and replicas that differ; psum gives the global "
    "sum on every device; debug.print with axis_index shows each device's block.",
    params=[
        Param(
            "check_vma_default",
            rows=["multidev.shard_map.check_vma_error"],
            expect=Expect(
                {"raised": "ValueError", "mentions_out_specs": True},
                printed={
                    "message_start": "shard_map applied to the function 'local_sum' was given out_specs which require "
                },
            ),
        ),
        Param(
            "debug_print",
            rows=["multidev.shard_map.debug_print_per_device"],
            expect=Expect(
                {
                    "blocks_by_device": {
                        "0": [0.0, 1.0, 2.0, 3.0],
                        "1": [4.0, 5.0, 6.0, 7.0],
                        "2": [8.0, 9.0, 10.0, 11.0],
                        "3": [12.0, 13.0, 14.0, 15.0],
                    }
                },
                printed={
                    "lines": [
                        "device 0 local block [0. 1. 2. 3.]",
                        "device 1 local block [4. 5. 6. 7.]",
                        "device 2 local block [ 8.  9. 10. 11.]",
                        "device 3 local block [12. 13. 14. 15.]",
                    ]
                },
            ),
        ),
        Param(
            "check_vma_false",
            rows=["multidev.shard_map.check_vma_false"],
            expect=Expect(
                {
                    "host_value": 6.0,
                    "replicas_consistent": False,
                    "sorted_replicas": [6.0, 22.0, 38.0, 54.0],
                }
            ),
        ),
        Param(
            "psum",
            rows=["multidev.shard_map.psum_consistent"],
            expect=Expect(
                {
                    "host_value": 120.0,
                    "replicas_consistent": True,
                    "sorted_replicas": [120.0, 120.0, 120.0, 120.0],
                }
            ),
        ),
    ],
    env=FOUR_DEVICES,
    notes="The chapter's program (SCRIPT_83) is run as written: local_sum prints its device index and block with "
    "jax.debug.print and returns the block's sum; the same run with check_vma=False and out_specs=P() "
    "gives both the debug_print and the check_vma_false rows (each cell runs it once and reads its "
    "view). Asserted, as the chapter asserts them: the ValueError whose message mentions out_specs, and "
    "the values and replica checks of check_vma=False and psum. The debug_print row is printed only; its "
    "prose claim (each device prints its own local block) is compared as the numbers parsed from the "
    "lines, device index to block. Printed: the first 80 characters of the error's first line and the exact "
    "per-device lines, sorted since the devices print in no fixed order. Versions without "
    "jax.shard_map (or without its check_vma keyword) are unsupported; jax.experimental.shard_map is not "
    "used in its place.",
    changes=[
        Change(
            since="0.6.1",
            why="jax.shard_map with the check_vma keyword first exists in 0.6.1; before it the case is unsupported "
            "(jax.experimental.shard_map is not used in its place).",
            evidence="measured (all run, linux-x86_64): 0.6.0 has no jax.shard_map (unsupported), 0.6.1 conforms",
        ),
    ],
)
def shard_map_replicas(check):
    import re

    import jax
    import jax.numpy as jnp
    from jax import lax
    from jax.sharding import NamedSharding, PartitionSpec as P

    shard_map = require("jax.shard_map")
    if check != "psum":
        require_keyword(shard_map, "check_vma", "jax.shard_map")
    mesh = jax.make_mesh((4,), ("d",))
    x = jax.device_put(jnp.arange(16.0), NamedSharding(mesh, P("d")))

    def local_sum(block):  # the chapter's: the print inside the per-device sum
        jax.debug.print("device {i} local block {b}", i=lax.axis_index("d"), b=block)
        return block.sum()

    if check == "check_vma_default":
        traced = outcome_of(lambda: jax.jit(shard_map(local_sum, mesh=mesh, in_specs=P("d"), out_specs=P()))(x))
        first = traced.message
        return Observation(
            {"raised": traced.raised, "mentions_out_specs": "out_specs" in first, "message_start": first[:80]},
            {"message": str(traced.exception)[:600]},
        )
    if check == "psum":
        result = jax.jit(
            shard_map(lambda block: lax.psum(block.sum(), "d"), mesh=mesh, in_specs=P("d"), out_specs=P())
        )(x)
        replicas, consistent = _replicas(result)
        return Observation(
            {"host_value": float(result), "replicas_consistent": consistent, "sorted_replicas": sorted(replicas)},
            {"replicas_in_device_order": replicas},
        )
    # debug_print and check_vma_false are two views of one run of the chapter's program.
    outputs = []

    def chapter_run():
        outputs.append(jax.jit(shard_map(local_sum, mesh=mesh, in_specs=P("d"), out_specs=P(), check_vma=False))(x))
        return outputs[-1]

    printed = printed_lines(chapter_run)
    result = outputs[0]
    if check == "debug_print":
        parsed = [re.fullmatch(r"device (\d+) local block \[(.*)\]", line) for line in printed]
        blocks = {m.group(1): [float(v) for v in m.group(2).split()] for m in parsed if m}
        return Observation(
            {"blocks_by_device": dict(sorted(blocks.items())), "lines": sorted(printed)}, {"host_value": float(result)}
        )
    replicas, consistent = _replicas(result)
    return Observation(
        {"host_value": float(result), "replicas_consistent": consistent, "sorted_replicas": sorted(replicas)},
        {"replicas_in_device_order": replicas, "printed_lines": len(printed)},
    )
