"""The rollout chart (`hack/bench/rollout_chart.py`): a valid PNG of the asked size, decoded
here by hand (signature, chunk CRCs, IHDR, IDAT rows), with every line in its own colour."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from hack.bench.rollout_chart import (
    BACKGROUND,
    PALETTE,
    Line,
    encode_png,
    render_chart,
    rollout_lines,
    write_rollout_chart,
)


@dataclass(frozen=True)
class P:
    t: float
    capacity: float
    ready: Mapping[str, Mapping[str, int]] = field(default_factory=dict)


def decode(png: bytes) -> tuple[int, int, set[tuple[int, int, int]]]:
    """Width, height and the set of colours of an 8-bit RGB PNG (filter 0 rows)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    at, chunks = 8, []
    while at < len(png):
        (length,) = struct.unpack(">I", png[at:at + 4])
        kind, data = png[at + 4:at + 8], png[at + 8:at + 8 + length]
        (crc,) = struct.unpack(">I", png[at + 8 + length:at + 12 + length])
        assert crc == zlib.crc32(kind + data) & 0xFFFFFFFF, kind
        chunks.append((kind, data))
        at += 12 + length
    kinds = [k for k, _ in chunks]
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND" and b"IDAT" in kinds
    width, height, depth, colour_type, compression, filtering, interlace = struct.unpack(
        ">IIBBBBB", chunks[0][1])
    assert (depth, colour_type, compression, filtering, interlace) == (8, 2, 0, 0, 0)
    raw = zlib.decompress(b"".join(d for k, d in chunks if k == b"IDAT"))
    stride = 1 + 3 * width
    assert len(raw) == stride * height
    colours: set[tuple[int, int, int]] = set()
    for row in range(height):
        line = raw[row * stride:(row + 1) * stride]
        assert line[0] == 0
        colours.update((line[i], line[i + 1], line[i + 2]) for i in range(1, stride, 3))
    return width, height, colours


def rollout() -> list[P]:
    """Generation a (2 prefill, 1 decode) replaced by b over ten samples."""
    series = []
    for step in range(11):
        new = min(2, step // 3)
        old = 2 - min(2, max(0, step - 5) // 2)
        ready = {g: {"prefill": n, "decode": min(1, n)} for g, n in (("a", old), ("b", new))
                 if n or step < 9}
        capacity = min(old / 2, min(1, old)) + min(new / 2, min(1, new))
        series.append(P(step * 0.1, capacity, ready))
    return series


def test_the_rollout_chart_is_a_png_of_the_size_asked_with_a_colour_per_line(
        tmp_path: Path) -> None:
    path = tmp_path / "rollout.png"
    colours = write_rollout_chart(path, rollout(), width=320, height=200)
    assert list(colours) == ["a/prefill", "a/decode", "b/prefill", "b/decode", "capacity"]
    assert len(set(colours.values())) == 5 and BACKGROUND not in colours.values()
    width, height, seen = decode(path.read_bytes())
    assert (width, height) == (320, 200)
    assert set(colours.values()) <= seen  # every line is drawn, in its own colour
    assert BACKGROUND in seen


def test_lines_and_panels() -> None:
    ready, capacity = rollout_lines([P(0.0, 1.0, {"a": {"W": 2}}), P(0.5, 0.5, {"b": {"W": 1}})])
    assert ready == [Line("a/W", ((0.0, 2.0), (0.5, 0.0))), Line("b/W", ((0.0, 0.0), (0.5, 1.0)))]
    assert capacity == [Line("capacity", ((0.0, 1.0), (0.5, 0.5)))]
    many = [Line(str(i), ((0.0, i), (1.0, i + 1))) for i in range(12)]
    png, colours = render_chart([many], width=64, height=48)
    assert len(set(colours.values())) == len(PALETTE) + 1  # black past the palette
    assert decode(png)[:2] == (64, 48)
    empty, none = render_chart([[]], width=100, height=100)
    assert none == {} and decode(empty)[2] == {BACKGROUND} | {(60, 60, 60)}


def test_the_encoder_takes_exactly_the_pixels_of_its_size() -> None:
    assert decode(encode_png(2, 1, bytes([255, 0, 0, 0, 0, 255])))[2] == {(255, 0, 0),
                                                                         (0, 0, 255)}
    with pytest.raises(ValueError, match="RGB pixels"):
        encode_png(2, 2, b"\x00" * 6)
