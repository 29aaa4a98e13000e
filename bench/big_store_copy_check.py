"""Check a PostgreSQL big store copied from SQLite (bench/big_store_copy.py) against the public API:

    python -m bench.big_store_copy_check URL [--journals 3]

builds the first journals again through the public API (bench.big_stores.build) into a fresh schema
(dropped after) and compares them with the copy at URL: the journal rows (all but created_at), the order
the feed gives their records, and every line but for what every build draws afresh (salts, the catalog's
and headers' ids, clock times, and the digests that follow from them); prints the comparison as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from bench.big_store_copy import url_schema
from bench.big_stores import ROOT, build

DRAWN_AFRESH = ("salt", "digest", "prev")
"""A line's fields that differ between two builds of the same calls: the salt is random (erasure
commitments), and the digest and the next record's `prev` follow from it."""


def normal(journal_id: str, line: bytes) -> dict[str, Any]:
    """A line without what every build draws afresh: DRAWN_AFRESH, and for the catalog's entries and
    the headers their ids (random), clock times, and the catalog entry's parent (the previous entry's
    id)."""
    record: dict[str, Any] = json.loads(line)
    for key in DRAWN_AFRESH:
        record.pop(key, None)
    if journal_id == "_catalog" or str(record["body"].get("kind", "")).startswith("waybook.header"):
        record.pop("id")
        record.pop("at")
        if journal_id == "_catalog":
            record["body"].pop("parent", None)
    return record


def check(copied_url: str, journals: int) -> dict[str, Any]:
    """Build the first `journals` journals through the public API (bench.big_stores.build) into a fresh
    schema and compare them with the copy at `copied_url`: the journal rows (all but created_at), every
    line (`normal`), and the order the feed gives their records."""
    import psycopg

    sys.path.insert(0, str(ROOT))
    from tests.helpers.pg_server import with_schema

    server = os.environ["WAYBOOK_BENCH_POSTGRES"]
    fresh = with_schema(server, f"bigstore_api_check_{journals}")
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {url_schema(fresh)} CASCADE".encode())
        conn.execute(f"CREATE SCHEMA {url_schema(fresh)}".encode())
    build(fresh, journals)
    ids = ["_catalog", *(f"session-{n:06d}" for n in range(journals))]
    found: dict[str, Any] = {}
    for side, url in (("api", fresh), ("copy", copied_url)):
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SELECT waybook_sequence()")  # what a reader's first feed read does
            rows = conn.execute(
                "SELECT journal_id, role, metadata, created, hidden, purged, head_seq, head_digest"
                " FROM waybook_journals WHERE journal_id = ANY(%s) ORDER BY journal_id",
                (ids,),
            ).fetchall()
            lines = conn.execute(
                "SELECT journal_id, seq, line, xact IS NOT NULL FROM waybook_records"
                " WHERE journal_id = ANY(%s) AND (journal_id <> '_catalog' OR seq <= %s) ORDER BY position",
                (ids, journals + 1),
            ).fetchall()
        found[side] = {
            "journals": [
                (j, role, meta, created, hidden, purged, seq if j != "_catalog" else None)
                for j, role, meta, created, hidden, purged, seq, _ in rows
            ],
            "order": [(j, seq) for j, seq, _, _ in lines],
            "lines": {(j, seq): normal(j, bytes(line)) for j, seq, line, _ in lines},
            "xact": all(x for *_, x in lines),
        }
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {url_schema(fresh)} CASCADE".encode())
    api, copy = found["api"], found["copy"]
    differing = [key for key, line in api["lines"].items() if copy["lines"].get(key) != line]
    result = {
        "journals": journals,
        "records_compared": len(api["lines"]),
        "journal_rows_equal": api["journals"] == copy["journals"],
        "feed_order_equal": api["order"] == copy["order"],
        "lines_differing": [f"{j}#{seq}" for j, seq in differing[:5]],
        "xact_set": api["xact"] and copy["xact"],
    }
    result["equal"] = (
        result["journal_rows_equal"] and result["feed_order_equal"] and not differing and result["xact_set"]
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", help="the copied PostgreSQL store (a bigstore_N schema's URL)")
    parser.add_argument("--journals", type=int, default=3)
    args = parser.parse_args()
    print(json.dumps(check(args.url, args.journals)))


if __name__ == "__main__":
    main()
