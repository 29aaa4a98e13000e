"""The four-worker diamond: A; B and C depend on A; D depends on B and C. Each worker is independent.

python -m tests.coordination.diamond URL KEY   (one worker in its own process, on a shared board)
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from waybook.coordination import Note, open_blackboard, run_worker

DEPENDS: dict[str, tuple[str, ...]] = {"A": (), "B": ("A",), "C": ("A",), "D": ("B", "C")}


def work(key: str) -> Any:
    def compute(inputs: Mapping[str, Any]) -> Any:
        if set(inputs) != set(DEPENDS[key]):  # a bounded context: exactly the notes it depends on
            msg = f"{key} saw {sorted(inputs)}"
            raise AssertionError(msg)
        if key == "A":
            return {"rows": 3}
        if key == "B":
            return {"doubled": inputs["A"]["rows"] * 2}
        if key == "C":
            return {"squared": inputs["A"]["rows"] ** 2}
        return {"sum": inputs["B"]["doubled"] + inputs["C"]["squared"]}

    return compute


def main() -> None:
    url, key = sys.argv[1], sys.argv[2]
    with open_blackboard(url) as board:
        note: Note = run_worker(board, key, DEPENDS[key], work(key), timeout=60)
    print(json.dumps({"key": note.key, "status": note.status, "value": note.value, "receipt": note.receipt}))


if __name__ == "__main__":
    main()
