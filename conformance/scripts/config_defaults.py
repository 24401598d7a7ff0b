"""Prints, after a plain `import jax`, the repr of every configuration option as one `RESULT <json>` line."""

import json

import jax

print("RESULT " + json.dumps({name: repr(value) for name, value in jax.config.values.items()}))
