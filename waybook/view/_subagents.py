"""A session page with its sub-agents' pages inside it, so one `waybook view` file opens them all.

A session's sub-agent links name journals; `with_subagents` gathers each linked journal's page data
through `load` (the caller's adapter: the journal file beside the session's, or the store's journal),
then the links of those, breadth first, each journal once, at most `SUBAGENT_PAGES`. A journal `load`
cannot find is listed as missing, so its link says so instead of pointing at nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

SUBAGENT_PAGES: Final = 200
"""The most sub-agent journals one page holds; more are listed as left out."""


def linked_journals(data: dict[str, Any]) -> list[str]:
    """The journals a page's sub-agent links name, in the order of the nodes that link them."""
    seen: dict[str, None] = {}
    for links in data["links"].values():
        for link in links:
            seen.setdefault(link["journal"], None)
    return list(seen)


def with_subagents(
    data: dict[str, Any], load: Callable[[str], dict[str, Any] | None], *, limit: int = SUBAGENT_PAGES
) -> dict[str, Any]:
    """`data` with `subagents` (journal id -> page data), `subagent_order` (their ids in the order the
    links were found: a page's keys are sorted) and `subagents_missing` (ids `load` did not find, or
    left out past `limit`)."""
    pages: dict[str, dict[str, Any]] = {}
    missing: list[str] = []
    queue = linked_journals(data)
    seen = {data["journal"], *queue}
    while queue:
        journal = queue.pop(0)
        page = load(journal) if len(pages) < limit else None
        if page is None:
            missing.append(journal)
            continue
        pages[journal] = page
        for more in linked_journals(page):
            if more not in seen:
                seen.add(more)
                queue.append(more)
    return {**data, "subagents": pages, "subagent_order": list(pages), "subagents_missing": missing}
