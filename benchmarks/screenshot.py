"""The README's picture: headspace run on the demo table, exported and turned into a PNG.

The table shows real screens Claude Code drew (the recorded corpus, read
by the real detector), through the real app; Textual exports the screen as
SVG, and cairosvg (``pip install cairosvg``, not a headspace dependency)
turns it into ``snapshots/screenshot.png``.  Run from the repository root:

    python benchmarks/screenshot.py
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.ui.apps import demo_app  # noqa: E402

SIZE = (120, 32)
FONT = "DejaVu Sans Mono"  # the SVG asks for Fira Code; any installed monospace font keeps the grid


async def svg() -> str:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await app.snapshot_loader(pilot)
        api = next(p for p, a in app.table.agents.items() if a.target == "api:0.0")
        app.table.select(api)
        await pilot.pause(0.5)
        return app.export_screenshot(title="headspace")


def main() -> int:
    import cairosvg

    out = ROOT / "snapshots" / "screenshot.png"
    picture = asyncio.run(svg()).replace("Fira Code", FONT)
    cairosvg.svg2png(bytestring=picture.encode(), write_to=str(out), output_width=1400)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
