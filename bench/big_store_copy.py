"""The PostgreSQL big store made from the SQLite one (bench/big_stores.py), and the check that it is what
the public API writes.

Building 100,000 journals of 50 records through the public API runs ~25-40 journals/s into PostgreSQL
(each create takes the catalog's row lock, so builder processes queue on it): about an hour. The SQLite
store of the same workload is already built through the public API, and both stores are
`DatabaseStore`s: the engine-neutral code seals every line (the catalog's entries, the headers, the
records) and decides every journal row, so copying its rows with COPY gives the PostgreSQL store the
public API would have written (5.1 million records in a few minutes).

bench/big_store_copy_check.py checks a copy against journals built again through the public API.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
import urllib.parse
from pathlib import Path

COPY_ROWS = 20_000
"""Rows per COPY statement when a store is copied from SQLite (each its own transaction)."""


def copy_sqlite_to_postgres(sqlite_file: Path, url: str) -> None:
    """The PostgreSQL store at `url` made, row for row, from the finished SQLite store `sqlite_file` of
    the same workload: both are `DatabaseStore`s, whose engine-neutral code seals every line (the
    catalog's entries, the headers, the records) and decides every journal row, so the SQLite store's
    rows are what the public API writes into PostgreSQL for the same calls; only the engine's
    bookkeeping differs. Feed positions are SQLite's (the order the records committed in: what
    PostgreSQL's sequencer gives a one-builder build, ordered by transaction); `xact` (the transaction
    that wrote a record, which the sequencer reads only for records not yet numbered) is set to the
    position. The schema is emptied first and created by `open_store` (the migrations), then loaded with
    COPY and the feed clock set to the last position; then VACUUM ANALYZE, as autovacuum would after a
    long build."""
    import psycopg

    from waybook.stores import open_store

    schema = url_schema(url)
    server = os.environ["WAYBOOK_BENCH_POSTGRES"]
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE".encode())
        conn.execute(f"CREATE SCHEMA {schema}".encode())
    open_store(url).close()  # the migrations; its fresh catalog is replaced below
    source = sqlite3.connect(f"file:{sqlite_file}?mode=ro", uri=True)
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        with conn.transaction():
            conn.execute("TRUNCATE waybook_journals, waybook_records")
            with conn.cursor().copy(
                "COPY waybook_journals (journal_id, role, metadata, created, created_at, hidden, purged,"
                " head_seq, head_digest) FROM STDIN"
            ) as copy:
                for row in source.execute(
                    "SELECT journal_id, role, metadata, created, created_at, hidden != 0, purged, head_seq,"
                    " head_digest FROM journals ORDER BY created"
                ):
                    copy.write_row(row)
        # Schema 4 dropped the records' digest column (each line ends with its digest): copy it where
        # the schema still has it.
        columns = ["journal_id", "seq", "position", "digest", "line", "xact"]
        has_digest = conn.execute(
            "SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()"
            " AND table_name = 'waybook_records' AND column_name = 'digest')"
        ).fetchone()
        if not (has_digest and has_digest[0]):
            columns.remove("digest")
        last = 0
        while True:
            rows = source.execute(
                "SELECT journal_id, seq, position, digest, line FROM records WHERE position > ?"
                " ORDER BY position LIMIT ?",
                (last, COPY_ROWS),
            ).fetchall()
            if not rows:
                break
            with (
                conn.transaction(),
                conn.cursor().copy(
                    f"COPY waybook_records ({', '.join(columns)}) FROM STDIN".encode()
                ) as copy,
            ):
                for journal_id, seq, position, digest, line in rows:
                    row = {"journal_id": journal_id, "seq": seq, "position": position, "digest": digest}
                    row.update(line=line, xact=position)
                    copy.write_row([row[column] for column in columns])
            last = rows[-1][2]
            if last // COPY_ROWS % 50 == 0:
                print(f"  copied {last} records in {time.perf_counter() - started:.0f} s", flush=True)
        conn.execute("UPDATE waybook_feed_clock SET position = %s", (last,))
        conn.execute("VACUUM ANALYZE waybook_journals")
        conn.execute("VACUUM ANALYZE waybook_records")
    source.close()


def relabel_index(source: Path, target: Path, url: str) -> None:
    """The search index of a store copied from SQLite: the SQLite store's index (the same feed, record
    for record and position for position, so the same documents and the same last position), copied
    and labelled with the PostgreSQL store's URL (the index refuses another store's file)."""
    shutil.copyfile(source, target)
    with sqlite3.connect(target) as db:  # `waybook search --store URL` labels its index with URL as given
        db.execute("UPDATE meta SET value = ? WHERE key = 'store'", (url,))


def url_schema(url: str) -> str:
    """The schema a `postgres_url` names (`bigstore_N`)."""
    options = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))["options"]
    return options.rpartition("search_path=")[2]
