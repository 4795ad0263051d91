"""The chaos soak: `python -m hack.soak` (see `run`)."""
