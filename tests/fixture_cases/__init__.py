"""Cases that exercise the machinery itself: they need no jax and end in every way a probe can end."""
