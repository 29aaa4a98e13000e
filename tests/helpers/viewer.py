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


def change_hash(driver: Any, fragment: str) -> None:
    """The page's location.hash set to `fragment` as a link within the page would, and awaited: the browser
    fires `hashchange` as a task after the assignment returns, so a look straight after it sees the old
    view. A listener added now runs after the page's own; its mark says the page's has run. A hash set to
    what it already is fires nothing, and there is nothing to await."""
    driver.execute_script(
        """
        const seen = () => { document.body.dataset.hashSeen = "1"; };
        delete document.body.dataset.hashSeen;
        const before = location.hash;
        window.addEventListener("hashchange", seen, { once: true });
        location.hash = arguments[0];
        if (location.hash === before) { window.removeEventListener("hashchange", seen); seen(); }
        """,
        fragment,
    )
    wait_for(driver, "return document.body.dataset.hashSeen && document.body.dataset.complete === '1'")


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


def long_session(path: Any, records: int) -> dict[str, Any]:
    """A coding session of about `records` records (questions, tool calls, results, answers), written
    fast (durability "none"): the ids of its last node and of a tool result halfway, and its turns."""
    from waybook import JsonlJournal, Session, ToolOutcome
    from waybook.model import ToolCallBlock

    session = Session.create(JsonlJournal(path, durability="none"), journal_id=path.stem)
    written, turn, middle, last = 1, 0, "", ""
    while written < records:
        turn += 1
        session.user(f"Step {turn}: look at module {turn % 40} and say what it does.")
        batch = session.turn(
            [ToolCallBlock(call_id=f"c{turn}", name="read", arguments={"path": f"src/m{turn % 40}.py"})],
            [ToolOutcome(f"c{turn}", "def f(x):\n    return x * 2\n" * 20)],
            usage={"input_tokens": 1200 + turn, "output_tokens": 40},
            model="bench-model",
        )
        if not middle and written >= records // 2:
            middle = batch.records[-1].id
        last = session.assistant(f"Module {turn % 40} doubles its input.", model="bench-model").id
        written += 4
    session.journal.close()
    return {"last": last, "middle_result": middle, "turns": turn}


def front_page(url: str) -> str:
    """serve's front page (its first page) of the store at `url`, from a server made and closed for it."""
    from waybook.view import ViewServer

    server = ViewServer(url)
    try:
        return server.front_page(1)
    finally:
        server.server_close()
