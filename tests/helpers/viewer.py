"""Opening a viewer page in the tests' headless Chromium (tests/view/conftest.py's `browser`)."""

from __future__ import annotations

from typing import Any


def wait_for(driver: Any, script: str, *, seconds: float = 30) -> Any:
    """Until `script` answers something truthy in the page; that answer."""
    from selenium.webdriver.support.ui import WebDriverWait  # the test extra; `browser` skips without it

    return WebDriverWait(driver, seconds).until(lambda d: d.execute_script(script))


def open_page(driver: Any, url: str) -> None:
    """`url` loaded, its conversation laid out whole (the page's `data-complete`), its logs cleared first."""
    driver.get_log("browser")
    driver.get("about:blank")
    driver.get(url)
    wait_for(driver, "return document.body.dataset.complete === '1'")


def severe(driver: Any) -> list[dict[str, Any]]:
    """The console errors the page logged since the last look."""
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def in_view(driver: Any, element: Any) -> bool:
    """Whether `element` is within the window's visible area now."""
    return bool(
        driver.execute_script(
            "const r = arguments[0].getBoundingClientRect();"
            "return r.bottom > 0 && r.top < window.innerHeight;",
            element,
        )
    )
