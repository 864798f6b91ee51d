"""The quality view in a real browser (issue 53): Debian's Chromium, driven by Selenium through
Debian's chromium-driver, headless, with a fresh profile. The store is the demo-like pipeline of
tests/view_store.py (filled through the producer's own paths), served as `lineage-quality view`
serves it. The datasets and failing rules are visible, the pages link to each other (dataset ->
run -> lineage), a dataset named `<script>...` shows as text and runs nothing, the stylesheet is
allowed by the CSP; a screenshot of each page is kept under test-artifacts/view/ (printed).

Chromium missing is a failure that says to run `make system`, never a skip."""

from __future__ import annotations

import shutil
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lineage_quality.producer.receiver import Receiver
from lineage_quality.producer.settings import Settings
from lineage_quality.view.open import open_stores
from lineage_quality.view.routes import view_routes
from view_store import EMPTY, HOSTILE, ORDERS, fill

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "view"
CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--window-size=1280,900",
)  # fmt: skip


def _serve(store: Path) -> Receiver:
    receiver = Receiver(None, Settings.of(port=0))
    receiver.add(view_routes(open_stores(store)))
    receiver.start()
    return receiver


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """The hostile store's view, and a demo-like one without hostile names (for docs/)."""
    folder = tmp_path_factory.mktemp("browser")
    hostile = _serve(fill(folder / "hostile.db"))
    clean = _serve(fill(folder / "clean.db", hostile=False))
    yield hostile.url, clean.url
    hostile.stop()
    clean.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    missing = [p for p in (CHROMIUM, DRIVER) if shutil.which(p) is None]
    if missing:
        pytest.fail(f"{' and '.join(missing)} not found: run `make system` (installs Debian's "
                    "chromium and chromium-driver)")  # fmt: skip
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(30)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots of the view: {ARTIFACTS}")
    yield driver
    driver.quit()


def shot(driver: Any, name: str) -> None:
    path = ARTIFACTS / f"{name}.png"
    driver.save_screenshot(str(path))
    assert path.stat().st_size > 1000


def no_alert(driver: Any) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert  # noqa: B018 - reading it is the check


def test_the_datasets_and_failing_rules_are_visible_and_the_pages_link(
    browser: Any, site: tuple[str, str]
) -> None:
    from selenium.webdriver.common.by import By

    url = site[0]
    browser.get(url + "/")
    no_alert(browser)
    assert browser.title == "Datasets - lineage-quality"
    header = browser.find_element(By.TAG_NAME, "header")
    assert header.value_of_css_property("background-color") == "rgba(29, 36, 51, 1)"  # CSP let it
    rows = {r.find_element(By.TAG_NAME, "a").text: r.text
            for r in browser.find_elements(By.CSS_SELECTOR, "tr.dataset")}  # fmt: skip
    assert len(rows) == 9
    assert "customer_id_not_null on customer_id (FAILED, ALERT)" in rows[f"file:{ORDERS}"]
    assert "blocked" in rows[f"file:{EMPTY}"]
    assert "not_empty (FAILED, BLOCK)" in rows[f"file:{EMPTY}"]
    shot(browser, "1-datasets")
    # dataset -> run -> lineage, by clicking
    browser.find_element(By.LINK_TEXT, f"file:{ORDERS}").click()
    assert browser.find_element(By.TAG_NAME, "h1").text == f"file:{ORDERS}"
    failed = browser.find_elements(By.CSS_SELECTOR, "table.grid td.FAILED")
    assert [c.text for c in failed] == ["3"]
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg circle[data-status='FAILED']")) == 1
    shot(browser, "2-dataset")
    browser.find_element(By.LINK_TEXT, "orders-4").click()
    assert browser.find_element(By.TAG_NAME, "h1").text == "Run orders-4"
    assert "orders.customer_id.not_null" in browser.find_element(By.TAG_NAME, "main").text
    shot(browser, "3-run")
    browser.find_element(By.LINK_TEXT, "lineage").click()
    assert browser.find_element(By.TAG_NAME, "h1").text == f"Lineage of file:{ORDERS}"
    downstream = browser.find_elements(By.CSS_SELECTOR, "li.neighbour")
    assert any(li.text.startswith("file:/lake/clean") and "marked: customer_id" in li.text
               for li in downstream)  # fmt: skip
    shot(browser, "4-lineage")


def test_a_dataset_named_with_a_script_stays_text(browser: Any, site: tuple[str, str]) -> None:
    from selenium.webdriver.common.by import By

    for i, name in enumerate(HOSTILE):
        key = f"file:{name}"
        browser.get(site[0] + "/datasets/" + urllib.parse.quote(key, safe=""))
        no_alert(browser)
        shown = browser.find_element(By.TAG_NAME, "h1").text
        if i < 3:  # as typed
            assert shown == key
        else:  # its controls written visibly
            assert shown == "file:/lake/\\x1b[31mred\\x9b\\u2028</title><b>x"
        assert browser.find_elements(By.CSS_SELECTOR, "main script, main img, h1 b") == []
        shot(browser, f"5-hostile-{i}")
    browser.get(site[0] + "/")
    no_alert(browser)
    assert "file:/lake/<script>alert(1)</script>" in browser.find_element(By.TAG_NAME, "main").text


def test_a_screenshot_for_the_docs(browser: Any, site: tuple[str, str]) -> None:
    from selenium.webdriver.common.by import By

    browser.set_window_size(1100, 640)
    browser.get(site[1] + "/")
    assert len(browser.find_elements(By.CSS_SELECTOR, "tr.dataset")) == 5
    shot(browser, "docs-datasets")
    browser.get(site[1] + "/datasets/" + urllib.parse.quote(f"file:{ORDERS}", safe=""))
    shot(browser, "docs-dataset")
    browser.set_window_size(1280, 900)
