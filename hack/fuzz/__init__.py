"""Fuzzing the operator with hypothesis-drawn objects of its five kinds (see `session`)."""
