"""The web explorer in a real browser: headless Chromium (Debian's ``chromium``) driven by
Playwright, against examples/plant under virtual time (docs/guide/web.md).

Without a browser the test skips with one reason; ``SENGEN_REQUIRE_BROWSER=1`` (set by .ci/run)
makes that a failure. ``SENGEN_WEB_SCREENSHOT=<file>`` also writes the screenshot there (the
guide's picture is taken this way).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from web_support import Running, plant_config, plant_package, running

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    if os.environ.get("SENGEN_REQUIRE_BROWSER") == "1":
        raise RuntimeError("SENGEN_REQUIRE_BROWSER=1 but no chromium is installed")
    pytest.skip("no chromium installed (apt-get install chromium)", allow_module_level=True)

from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402

ROOT = "webplant_ui"  # the generated plant's root package, this module's own


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    for _ in plant_package(tmp_path_factory.mktemp("webplant"), ROOT):
        yield from running(plant_config(ROOT, {}, virtual=True))


@pytest.fixture
def page(system: Running) -> Iterator[Page]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 800})
            page.goto(system.url + "/")
            yield page
        finally:
            browser.close()


def test_explore_plot_call_and_step_the_plant(page: Page, tmp_path: Path) -> None:
    expect(page.locator("#status")).to_have_text("live", timeout=10_000)
    # Under virtual time the plant publishes its objects in its first steps.
    expect(page.locator("#clock")).to_be_visible(timeout=10_000)
    page.fill("#search", "tank")
    tank = page.locator('.obj[data-path="local.plant.tank"]')
    for _ in range(50):
        page.click("#step")
        if tank.count():
            break
        page.wait_for_timeout(100)
    expect(tank).to_be_visible(timeout=10_000)
    tank.click()
    level = page.locator('#properties tr[data-prop="level"] .value')
    expect(level).not_to_have_text("", timeout=10_000)
    # Steps of the clock change the level.
    page.fill("#step-count", "20")
    page.click("#steps")
    before = level.text_content()
    page.click("#steps")
    expect(level).not_to_have_text(before or "", timeout=10_000)
    # Plot it, then let time run so that the series fills.
    page.click('button.plot[data-key="local.plant.tank.level"]')
    page.fill("#step-count", "5")
    series = "window.sengen.series.get('local.plant.tank.level').points.length"
    for _ in range(40):
        before_step = page.evaluate(series)
        page.click("#steps")
        page.wait_for_function(f"{series} > {before_step}", timeout=10_000)
    # Call a method from the form generated from the type: the master clock's steps(count).
    page.fill("#search", "master")
    page.locator('.obj[data-path="local.kernel.master"]').click()
    form = page.locator('form.method[data-method="steps"]')
    form.locator('input[name="count"]').fill("3")
    form.locator("button").click()
    expect(form.locator(".result")).to_have_class("result done", timeout=10_000)
    points = page.evaluate("window.sengen.series.get('local.plant.tank.level').points.length")
    assert points >= 5
    # The canvas holds the series' colour: the plot is drawn, not empty.
    drawn = page.evaluate("""() => { const c = document.getElementById('plot');
                   const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                   let n = 0; for (let i = 0; i < d.length; i += 4)
                     if (d[i] < 80 && d[i + 2] > 150) n++;  // the first series' blue
                   return n; }""")
    assert drawn > 50
    # Export: the plot as a PNG, its points as CSV.
    with page.expect_download() as png:
        page.click("#png")
    assert Path(png.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with page.expect_download() as csv:
        page.click("#csv")
    rows = Path(csv.value.path()).read_text().splitlines()
    assert rows[0] == "series,time_ns,value" and len(rows) > points
    assert all(row.startswith("local.plant.tank.level,") for row in rows[1:])
    # Zoom: a notch of the wheel over the plot narrows its time window.
    page.locator("#plot").hover()
    page.mouse.wheel(0, -100)
    expect(page.locator("#window")).to_have_value("5")
    # A struct's numeric fields are series of their own (the plant has no struct property).
    fields = page.evaluate("numericFields({x: 1, at: {lat: 2, name: 'n'}, tags: [3]})")
    assert fields == ["x", "at.lat"]
    assert page.evaluate("pick({at: {lat: 2.5}}, 'at.lat')") == 2.5
    page.fill("#search", "plant")
    tank.click()  # the tank and its plot in the picture
    expect(level).not_to_have_text("", timeout=10_000)
    shot = page.screenshot(path=str(tmp_path / "web.png"))
    assert len(shot) > 10_000
    wanted = os.environ.get("SENGEN_WEB_SCREENSHOT")
    if wanted:
        Path(wanted).write_bytes(shot)
