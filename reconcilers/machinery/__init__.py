"""What every reconciler shares: the one child writer, the status writer, the finalizer,
conditions, the resources it reads and writes, and the per-process context."""
