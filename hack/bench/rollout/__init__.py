"""Rollout benchmark: N disaggregated graphs change their worker image at once, sampled every
tick; the invariants' worst values, rollout times and writes per rollout, beside the same
change made by the operator of before worker generations (`python -m hack.bench.rollout`)."""
