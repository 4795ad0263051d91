"""A benchmark run on this work tree and on an earlier commit in one invocation, figures side
by side (`python -m hack.bench.baseline`)."""
