"""The conversion benchmark: `python -m hack.bench.conversion`."""
