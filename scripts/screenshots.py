"""Screenshots of every web page at phone width, and how wide each page really is.

Starts ``whichgpu serve`` on 127.0.0.1 with a throwaway home (no network: offline Hub, offline
price sources), opens each page in Debian's headless Chromium through Playwright, prints the
page's width against the screen's and the smallest chart text as drawn, and saves a full-page
screenshot per page under ``--out`` (docs/img/ for the README).

    python scripts/screenshots.py                      # 390 x 844, English and French
    python scripts/screenshots.py --width 360 --check  # exit 1 if a page scrolls sideways
"""

from __future__ import annotations

import argparse
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from whichgpu.web.local_server import serve

CHROMIUM = os.environ.get("WHICHGPU_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ROOT = Path(__file__).resolve().parent.parent

# (file name, path): each page of the site with the question its README example asks.
PAGES: tuple[tuple[str, str], ...] = (
    ("advisor", "/?task=image&model=flux.1-dev&quant=fp8&amount=1000&unit=images"
                "&prices=vramfarm-2026-11"),
    ("advisor-llm", "/?task=inference&model=llama-3.1-8b&amount=1M&unit=tokens"),
    ("memory", "/memory?model=llama-3.1-70b&quant=q4_k_m&context=8k"),
    ("gpus", "/gpus"),
    ("gpu", "/gpus/rtx-4090"),
    ("cost", "/cost?task=image&model=flux.1-dev&quant=fp8&images=1000"),
    ("rent-or-buy", "/rent-or-buy?gpu=h100-sxm&purchase_price=25000USD&rent_price=3.15USD"),
    ("prices", "/prices?gpu=h100-sxm"),
)

# Page width beyond the screen, the widest offenders, and the smallest chart text on screen
# (its font size times the SVG's scale), all measured by the browser itself.
MEASURE = """(vw) => {
  const over = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.right <= vw + 1) continue;
    if (el.closest('.table-wrap, pre, .chart-box svg')
        && !el.matches('.table-wrap, pre')) continue;  // scrolls inside its own region
    over.push(`${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}` +
              `${el.className && typeof el.className === 'string' ? '.' +
                 el.className.trim().split(/\\s+/).join('.') : ''} right=${Math.round(r.right)} ` +
              JSON.stringify((el.textContent || '').trim().slice(0, 40)));
  }
  let smallest = null;
  for (const t of document.querySelectorAll('svg.chart text')) {
    const r = t.getBoundingClientRect();
    if (r.width === 0 || !t.textContent.trim()) continue;
    const svg = t.ownerSVGElement;
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const px = parseFloat(getComputedStyle(t).fontSize) * scale;
    if (smallest === null || px < smallest) smallest = px;
  }
  return {scroll: document.documentElement.scrollWidth, screen: vw, over: over.slice(0, 8),
          smallestChartText: smallest};
}"""


@dataclass(frozen=True)
class Measure:
    name: str
    lang: str
    scroll: int
    screen: int
    smallest_chart_text: float | None
    over: list[str]

    @property
    def sideways(self) -> int:
        return self.scroll - self.screen


def measure_page(tab, base: str, name: str, path: str, lang: str, width: int) -> Measure:
    """Load one page and measure it against a screen ``width`` px wide (a phone lays a page
    wider than its screen out at that width and zooms it out, so innerWidth would hide it)."""
    sep = "&" if "?" in path else "?"
    tab.goto(f"{base}{path}{sep}lang={lang}")
    tab.wait_for_load_state("networkidle")
    m = tab.evaluate(MEASURE, width)
    return Measure(name, lang, m["scroll"], m["screen"], m["smallestChartText"], m["over"])


def shoot(tab, path: Path, tall: int) -> None:
    """``tall`` px of the page from the top of its answer (#results, or #error), else from the
    top of the page: an advisor page is 10,000 px long on a phone, its answer below the form."""
    top = tab.evaluate("(() => { const r = document.getElementById('results') || "
                       "document.getElementById('error'); "
                       "return r ? r.getBoundingClientRect().top + window.scrollY : 0; })()")
    page_h = tab.evaluate("document.documentElement.scrollHeight")
    width = tab.viewport_size["width"]
    top = 0 if top < tall / 2 else max(0, min(top - 8, page_h - tall))
    tab.screenshot(path=str(path), full_page=True,
                   clip={"x": 0, "y": top, "width": width, "height": min(tall, page_h - top)})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--width", type=int, default=390)
    ap.add_argument("--height", type=int, default=844)
    ap.add_argument("--lang", action="append", choices=("en", "fr"),
                    help="one or both (default both)")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img",
                    help="where the PNGs go (default docs/img)")
    ap.add_argument("--no-shots", action="store_true", help="measure only")
    ap.add_argument("--only", nargs="+", choices=[n for n, _ in PAGES],
                    help="screenshots of these pages only (all are measured)")
    ap.add_argument("--screens", type=float, default=2.0,
                    help="how many screen heights each screenshot keeps (default 2)")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if a page is wider than the screen or chart text < 11 px")
    a = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    langs = a.lang or ["en", "fr"]
    bad = 0
    with tempfile.TemporaryDirectory() as home, serve(Path(home)) as base, \
            sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        ctx = browser.new_context(viewport={"width": a.width, "height": a.height},
                                  device_scale_factor=1, is_mobile=True, has_touch=True)
        tab = ctx.new_page()
        print(f"{'page':<14} lang  width/screen  smallest chart text")
        for lang in langs:
            for name, path in PAGES:
                m = measure_page(tab, base, name, path, lang, a.width)
                text = "-" if m.smallest_chart_text is None else f"{m.smallest_chart_text:.1f} px"
                flag = ""
                if m.sideways > 1 or (m.smallest_chart_text or 99) < 11:
                    bad += 1
                    flag = "  <-- " + "; ".join(m.over[:3])
                print(f"{name:<14} {lang:<4} {m.scroll:>5}/{m.screen:<6} {text:>8}{flag}")
                if not a.no_shots and (not a.only or name in a.only):
                    a.out.mkdir(parents=True, exist_ok=True)
                    suffix = "" if lang == "en" else f"-{lang}"
                    shoot(tab, a.out / f"phone-{name}{suffix}.png", a.screens * a.height)
        browser.close()
    return 1 if a.check and bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
