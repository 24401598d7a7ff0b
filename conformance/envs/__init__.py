"""Target environments: the package index, installed interpreters, the environment builder, matrices, pins."""
