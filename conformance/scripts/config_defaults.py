"""Prints, after `import jax` and the modules the chapter's process had imported (jax.experimental.checkify,
jax.test_util, jax.monitoring), the repr of every configuration option as one `RESULT <json>` line."""

import importlib
import json

import jax

CHAPTER_IMPORTS = ("jax.experimental.checkify", "jax.test_util", "jax.monitoring")

imported = []
for name in CHAPTER_IMPORTS:
    try:
        importlib.import_module(name)
        imported.append(name)
    except ImportError:
        pass
print("RESULT " + json.dumps({name: repr(value) for name, value in jax.config.values.items()}))
print("IMPORTED " + json.dumps(imported))
