"""The PostgreSQL store's schema, created and moved forward by versioned, idempotent migrations.

Every table and function lives in the connection's current schema (the first entry of `search_path`,
which a URL can set with `?options=-c%20search_path%3Dname`) under a `waybook_` prefix, so one database
can hold several stores. `migrate` runs at every open: it takes a transaction-scoped advisory lock (two
processes opening a fresh store at once do not race), applies the migrations the database lacks, each
recorded in `waybook_schema`, and refuses a database whose schema is newer than this code knows.

Rules for adding a migration: append a `Migration` with the next version; never edit a released one;
each must be safe to run on any database at the previous version.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import attrs
import psycopg

from waybook.journal.head import GENESIS_DIGEST
from waybook.stores.postgres.errors import SchemaTooNewError


@attrs.frozen
class Migration:
    version: int
    summary: str
    statements: tuple[str, ...]


_APPEND_FUNCTION: Final = f"""
CREATE OR REPLACE FUNCTION waybook_append(
    p_journal text, p_expected_seq bigint, p_expected_digest text, p_digests text[], p_lines bytea[],
    OUT committed boolean, OUT head_seq bigint, OUT head_digest text, OUT first_position bigint
) LANGUAGE plpgsql AS $fn$
-- Compare-and-append, one round trip and one transaction:
-- 1. move the journal's head row only if it still is the head the writer planned against
--    (a concurrent writer holding the row makes this wait, then see the new head and match nothing);
-- 2. take feed positions from the one-row feed clock: the row lock it takes is held until commit, so
--    positions are handed out in commit order and a reader never sees a later one before an earlier;
-- 3. insert the records verbatim and notify tailing readers (delivered at commit).
DECLARE
    n integer := cardinality(p_lines);
    last_position bigint;
BEGIN
    IF n IS NULL OR n < 1 OR cardinality(p_digests) IS DISTINCT FROM n THEN
        RAISE EXCEPTION 'waybook_append: % lines and % digests', n, cardinality(p_digests);
    END IF;
    UPDATE waybook_heads AS h SET seq = p_expected_seq + n, digest = p_digests[n]
     WHERE h.journal_id = p_journal AND h.seq = p_expected_seq AND h.digest = p_expected_digest;
    IF NOT FOUND THEN
        committed := false;
        SELECT h.seq, h.digest INTO head_seq, head_digest FROM waybook_heads AS h
         WHERE h.journal_id = p_journal;
        RETURN;
    END IF;
    UPDATE waybook_feed_clock AS c SET position = c.position + n RETURNING c.position INTO last_position;
    INSERT INTO waybook_records (journal_id, seq, position, digest, line)
    SELECT p_journal, p_expected_seq + i, last_position - n + i, p_digests[i], p_lines[i]
      FROM generate_series(1, n) AS i;
    PERFORM pg_notify(waybook_channel(), last_position::text);
    committed := true;
    head_seq := p_expected_seq + n;
    head_digest := p_digests[n];
    first_position := last_position - n + 1;
END
$fn$
"""

MIGRATIONS: Final[tuple[Migration, ...]] = (
    Migration(
        1,
        "journals, heads, records, the feed clock, compare-and-append",
        (
            """CREATE TABLE waybook_journals (
                journal_id text PRIMARY KEY,
                created bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
                role text NOT NULL,
                metadata text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now()
            )""",
            f"""CREATE TABLE waybook_heads (
                journal_id text PRIMARY KEY REFERENCES waybook_journals ON DELETE CASCADE,
                seq bigint NOT NULL DEFAULT 0 CHECK (seq >= 0),
                digest text NOT NULL DEFAULT '{GENESIS_DIGEST}'
            )""",
            """CREATE TABLE waybook_records (
                journal_id text NOT NULL,
                seq bigint NOT NULL CHECK (seq > 0),
                position bigint NOT NULL,
                digest text NOT NULL,
                line bytea NOT NULL,
                PRIMARY KEY (journal_id, seq)
            )""",
            "CREATE UNIQUE INDEX waybook_records_position ON waybook_records (position)",
            """CREATE TABLE waybook_feed_clock (
                only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
                position bigint NOT NULL
            )""",
            "INSERT INTO waybook_feed_clock (position) VALUES (0)",
            """CREATE OR REPLACE FUNCTION waybook_channel() RETURNS text LANGUAGE sql STABLE AS
               $fn$ SELECT 'waybook_feed_' || left(md5(current_schema()), 16) $fn$""",
            _APPEND_FUNCTION,
        ),
    ),
)

LATEST: Final = MIGRATIONS[-1].version

_LOCK_KEY: Final = "SELECT pg_advisory_xact_lock(hashtextextended('waybook:' || current_schema(), 0))"


def migrate(conn: psycopg.Connection[object], *, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Bring the current schema to the latest version (idempotent); return the version it is at.

    Raises SchemaTooNewError, having changed nothing, if the database was migrated by newer code.
    """
    known = migrations[-1].version if migrations else 0
    with conn.transaction():
        if current_schema(conn) is None:
            msg = "the connection has no current schema; set search_path to an existing schema"
            raise psycopg.ProgrammingError(msg)
        conn.execute(_LOCK_KEY)
        conn.execute(
            """CREATE TABLE IF NOT EXISTS waybook_schema (
                version integer PRIMARY KEY,
                summary text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )"""
        )
        row = conn.execute("SELECT coalesce(max(version), 0) FROM waybook_schema").fetchone()
        at = int(row[0]) if row else 0
        if at > known:
            raise SchemaTooNewError(found=at, known=known, schema=current_schema(conn) or "")
        for migration in migrations:
            if migration.version <= at:
                continue
            for statement in migration.statements:
                conn.execute(statement.encode())
            conn.execute(
                "INSERT INTO waybook_schema (version, summary) VALUES (%s, %s)",
                (migration.version, migration.summary),
            )
            at = migration.version
    return at


def current_schema(conn: psycopg.Connection[object]) -> str | None:
    row = conn.execute("SELECT current_schema()").fetchone()
    return None if row is None or row[0] is None else str(row[0])

