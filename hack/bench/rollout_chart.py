"""A PNG line chart of a rollout, drawn with the standard library only (zlib and struct).

`write_rollout_chart(path, series)` draws what a rollout sampler recorded (anything with
`t`, `ready` -- generation -> worker component -> ready pods -- and `capacity`, such as
`e2e.rollout_sampler.Point`): the top panel has one line per generation and component (ready
prefill and decode of each generation), the bottom one the serving capacity, with a grid line
at 1.0. Each line has a colour of its own (`PALETTE`, in the order the lines first appear); the
legend is a row of swatches in that order, and the function returns each label's colour, for
the caller to print or write beside the image.

Lines are steps (a value holds until the next sample), 2 px wide; a line is shifted by up to
2 px by its index so that lines of equal values stay visible side by side. `render_chart`
draws any panels of `Line`s, `encode_png` encodes any RGB raster.
"""

from __future__ import annotations

import itertools
import struct
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

Colour = tuple[int, int, int]

#: Distinct line colours (Tableau 10), then black for the eleventh line on.
PALETTE: tuple[Colour, ...] = (
    (31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
    (140, 86, 75), (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207))
BACKGROUND: Colour = (255, 255, 255)
FRAME: Colour = (60, 60, 60)
GRID: Colour = (225, 225, 225)
_MARGIN = 24
_SWATCH = 10


@dataclass(frozen=True)
class Line:
    """One series: a label and its (t, value) points in time order."""

    label: str
    points: tuple[tuple[float, float], ...]


class RolloutPoint(Protocol):
    """What the chart reads of one sample."""

    @property
    def t(self) -> float: ...
    @property
    def ready(self) -> Mapping[str, Mapping[str, int]]: ...
    @property
    def capacity(self) -> float: ...


class Canvas:
    """An RGB raster with pixels, rectangles and lines."""

    def __init__(self, width: int, height: int, background: Colour = BACKGROUND) -> None:
        if width < 1 or height < 1:
            raise ValueError(f"a {width}x{height} canvas has no pixels")
        self.width, self.height = width, height
        self.pixels = bytearray(bytes(background) * (width * height))

    def set(self, x: int, y: int, colour: Colour) -> None:
        if 0 <= x < self.width and 0 <= y < self.height:
            at = 3 * (y * self.width + x)
            self.pixels[at:at + 3] = bytes(colour)

    def rect(self, x0: int, y0: int, x1: int, y1: int, colour: Colour) -> None:
        """Fill the rectangle with corners (x0, y0) and (x1, y1), both included."""
        for y in range(min(y0, y1), max(y0, y1) + 1):
            for x in range(min(x0, x1), max(x0, x1) + 1):
                self.set(x, y, colour)

    def line(self, x0: int, y0: int, x1: int, y1: int, colour: Colour, width: int = 1) -> None:
        """A straight line (Bresenham), `width` px square brush."""
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        error = dx + dy
        while True:
            self.rect(x0, y0, x0 + width - 1, y0 + width - 1, colour)
            if x0 == x1 and y0 == y1:
                return
            doubled = 2 * error
            if doubled >= dy:
                error += dy
                x0 += sx
            if doubled <= dx:
                error += dx
                y0 += sy

    def png(self) -> bytes:
        return encode_png(self.width, self.height, bytes(self.pixels))


def encode_png(width: int, height: int, rgb: bytes) -> bytes:
    """An 8-bit RGB PNG of `rgb` (rows top to bottom, 3 bytes a pixel, no padding)."""
    if len(rgb) != width * height * 3:
        raise ValueError(f"{len(rgb)} bytes are not {width}x{height} RGB pixels")
    stride = width * 3
    raw = b"".join(b"\x00" + rgb[row * stride:(row + 1) * stride] for row in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(raw, 9)) + _chunk(b"IEND", b""))


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def render_chart(panels: Sequence[Sequence[Line]], *, width: int = 900, height: int = 500,
                 grid: Sequence[Sequence[float]] = ()) -> tuple[bytes, dict[str, Colour]]:
    """Panels stacked top to bottom, sharing the time axis; `grid[i]` the values of panel i's
    horizontal grid lines. The PNG and each line's colour by label."""
    canvas = Canvas(width, height)
    lines = [line for panel in panels for line in panel]
    colours = {line.label: _colour(i) for i, line in enumerate(lines)}
    for i, line in enumerate(lines):  # the legend: swatches along the top
        x = _MARGIN + i * (_SWATCH + 6)
        canvas.rect(x, 6, x + _SWATCH - 1, 6 + _SWATCH - 1, colours[line.label])
    times = [t for line in lines for t, _ in line.points]
    t0, t1 = (min(times), max(times)) if times else (0.0, 1.0)
    span = (t1 - t0) or 1.0
    top, bottom = _MARGIN, height - _MARGIN
    band = (bottom - top) // max(1, len(panels))
    index = 0
    for n, panel in enumerate(panels):
        y_top, y_bottom = top + n * band + 4, top + (n + 1) * band - 4
        peak = max([v for line in panel for _, v in line.points] + [1.0]) * 1.05

        def y_of(value: float, low: int = y_top, high: int = y_bottom, peak: float = peak
                 ) -> int:
            return round(high - value / peak * (high - low))

        def x_of(t: float) -> int:
            return round(_MARGIN + (t - t0) / span * (width - 2 * _MARGIN))

        for value in grid[n] if n < len(grid) else ():
            canvas.line(_MARGIN, y_of(value), width - _MARGIN, y_of(value), GRID)
        canvas.line(_MARGIN, y_top, _MARGIN, y_bottom, FRAME)
        canvas.line(_MARGIN, y_bottom, width - _MARGIN, y_bottom, FRAME)
        for line in panel:
            shift = index % 3 - 1
            colour = colours[line.label]
            for (ta, va), (tb, vb) in itertools.pairwise(line.points):
                xa, xb, ya, yb = x_of(ta), x_of(tb), y_of(va) + shift, y_of(vb) + shift
                canvas.line(xa, ya, xb, ya, colour, 2)  # the value holds...
                canvas.line(xb, ya, xb, yb, colour, 2)  # ...until the next sample
            index += 1
    return canvas.png(), colours


def _colour(index: int) -> Colour:
    return PALETTE[index] if index < len(PALETTE) else (0, 0, 0)


def rollout_lines(series: Iterable[RolloutPoint]) -> tuple[list[Line], list[Line]]:
    """The ready pods of each generation and component (`<generation>/<component>`, 0 where a
    sample has none), and the capacity."""
    points = list(series)
    keys = list(dict.fromkeys((g, c) for p in points for g, counts in p.ready.items()
                              for c in counts))
    ready = [Line(f"{g}/{c}", tuple((p.t, float(p.ready.get(g, {}).get(c, 0)))
                                    for p in points)) for g, c in keys]
    return ready, [Line("capacity", tuple((p.t, p.capacity) for p in points))]


def write_rollout_chart(path: Path, series: Iterable[RolloutPoint], *, width: int = 900,
                        height: int = 500) -> dict[str, Colour]:
    """Draw the rollout chart (see the module) into `path`; each line's colour by label."""
    ready, capacity = rollout_lines(series)
    png, colours = render_chart([ready, capacity], width=width, height=height,
                                grid=[(), (1.0,)])
    path.write_bytes(png)
    return colours
