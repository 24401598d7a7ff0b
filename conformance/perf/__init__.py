"""The performance tier: workloads measured per release (`child`), decided by rank tests (`stats`), sampled in
interleaved rounds (`session`), stored in the release's result file (`store`), bisected and gated."""
