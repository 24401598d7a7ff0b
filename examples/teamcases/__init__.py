"""A team's own cases, in the suite's case API: run with `jax-conformance run --cases examples/teamcases`."""
