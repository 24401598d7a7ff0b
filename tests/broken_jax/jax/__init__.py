"""A jax that does not import (a broken install), copied into a scratch environment by tests/test_builds.py."""

raise ImportError("jaxlib is missing: a broken install")
