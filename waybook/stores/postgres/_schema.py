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

import contextlib
from collections.abc import Sequence
from typing import Any, Final

import attrs
import psycopg

from waybook.model import GENESIS_DIGEST, StorageError
from waybook.stores.postgres._errors import SchemaTooNewError


@attrs.frozen
class Migration:
    version: int
    summary: str
    statements: tuple[str, ...]


_INSERT_FUNCTION: Final = """
CREATE FUNCTION waybook_insert(
    p_journal text, p_expected_seq bigint, p_expected_digest text,
    p_seqs bigint[], p_positions bigint[], p_digests text[], p_lines bytea[]
) RETURNS void LANGUAGE plpgsql AS $fn$
-- Insert a batch and move the journal's head row, only if the head row still is the head the batch
-- follows. The writer holds the journal row (SELECT ... FOR UPDATE) and the feed clock row, so this
-- cannot fail for a waybook writer; it fails closed if anything else has moved the head.
DECLARE
    n integer := cardinality(p_lines);
BEGIN
    IF n IS NULL OR n < 1 OR cardinality(p_seqs) <> n OR cardinality(p_positions) <> n
       OR cardinality(p_digests) <> n OR p_seqs[1] <> p_expected_seq + 1
       OR p_seqs[n] <> p_expected_seq + n THEN
        RAISE EXCEPTION 'waybook_insert: a batch of % must follow seq %', n, p_expected_seq
            USING ERRCODE = 'WB400';
    END IF;
    UPDATE waybook_journals AS j SET head_seq = p_seqs[n], head_digest = p_digests[n]
     WHERE j.journal_id = p_journal AND j.head_seq = p_expected_seq AND j.head_digest = p_expected_digest
       AND j.purged IS NULL;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'waybook_insert: the head of % is no longer seq %', p_journal, p_expected_seq
            USING ERRCODE = 'WB409';
    END IF;
    INSERT INTO waybook_records (journal_id, seq, position, digest, line)
    SELECT p_journal, r.seq, r.position, r.digest, r.line
      FROM unnest(p_seqs, p_positions, p_digests, p_lines) AS r(seq, position, digest, line);
    PERFORM pg_notify(waybook_channel(), p_positions[n]::text);
END
$fn$
"""

_APPEND_FUNCTION: Final = """
CREATE FUNCTION waybook_append(
    p_journal text, p_expected_seq bigint, p_expected_digest text, p_digests text[], p_lines bytea[]
) RETURNS boolean LANGUAGE plpgsql AS $fn$
-- Compare-and-append in one statement (so one round trip and, in autocommit, one transaction):
-- move the journal's head row only if it still is the head the writer planned against (a writer
-- holding the row makes this wait, then see the new head and match nothing), then take feed positions
-- from the feed clock (its row lock, held until commit, orders writers by commit), insert the records
-- verbatim and notify tailing readers (delivered at commit). False, with nothing written, when the
-- head has moved (or the journal is purged or unknown): the writer then takes the locked path.
DECLARE
    n integer := cardinality(p_lines);
    last_position bigint;
BEGIN
    IF n IS NULL OR n < 1 OR cardinality(p_digests) <> n THEN
        RAISE EXCEPTION 'waybook_append: % lines and % digests', n, cardinality(p_digests)
            USING ERRCODE = 'WB400';
    END IF;
    UPDATE waybook_journals AS j SET head_seq = p_expected_seq + n, head_digest = p_digests[n]
     WHERE j.journal_id = p_journal AND j.head_seq = p_expected_seq AND j.head_digest = p_expected_digest
       AND j.purged IS NULL;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    UPDATE waybook_feed_clock AS c SET position = c.position + n RETURNING c.position INTO last_position;
    INSERT INTO waybook_records (journal_id, seq, position, digest, line)
    SELECT p_journal, p_expected_seq + i, last_position - n + i, p_digests[i], p_lines[i]
      FROM generate_series(1, n) AS i;
    PERFORM pg_notify(waybook_channel(), last_position::text);
    RETURN true;
END
$fn$
"""

BLOB_LOCK: Final = "hashtextextended('waybook-blobs:' || current_schema(), 0)"
"""The advisory lock a blob's creation, refresh or lease holds shared, and a collection's delete holds
exclusively (waybook/stores/postgres/_blobs.py)."""

_BLOB_KEEP_FUNCTION: Final = f"""
CREATE FUNCTION waybook_blob_keep(p_digest text, p_holder text) RETURNS boolean
LANGUAGE plpgsql AS $fn$
-- If the blob is stored, make it young again and lease it to p_holder; false (nothing done) if not.
BEGIN
    PERFORM pg_advisory_xact_lock_shared({BLOB_LOCK});
    UPDATE waybook_blobs SET stored = clock_timestamp() WHERE digest = p_digest;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    INSERT INTO waybook_blob_leases (digest, holder, taken) VALUES (p_digest, p_holder, clock_timestamp())
        ON CONFLICT (digest, holder) DO UPDATE SET taken = excluded.taken;
    RETURN true;
END
$fn$
"""

_BLOB_ADD_FUNCTION: Final = f"""
CREATE FUNCTION waybook_blob_add(
    p_id bigint, p_digest text, p_size bigint, p_parts integer, p_media_type text, p_holder text,
    p_data bytea
) RETURNS void LANGUAGE plpgsql AS $fn$
-- Make a blob visible and lease it: the parts this transaction stored under p_id, or, with p_id null,
-- the one part p_data (a small blob in one call). Bytes already stored keep their first copy and are
-- made young again; parts stored under p_id for them are dropped.
DECLARE
    kept bigint;
BEGIN
    PERFORM pg_advisory_xact_lock_shared({BLOB_LOCK});
    UPDATE waybook_blobs SET stored = clock_timestamp() WHERE digest = p_digest RETURNING id INTO kept;
    IF NOT FOUND THEN
        IF p_id IS NULL THEN
            p_id := nextval('waybook_blob_ids');
            IF p_parts > 0 THEN
                INSERT INTO waybook_blob_parts (blob, part, bytes) VALUES (p_id, 0, p_data);
            END IF;
        END IF;
        INSERT INTO waybook_blobs (id, digest, size, parts, media_type, stored)
            VALUES (p_id, p_digest, p_size, p_parts, p_media_type, clock_timestamp())
            ON CONFLICT (digest) DO UPDATE SET stored = excluded.stored RETURNING id INTO kept;
    END IF;
    IF p_id IS NOT NULL AND kept <> p_id THEN
        DELETE FROM waybook_blob_parts WHERE blob = p_id;
    END IF;
    INSERT INTO waybook_blob_leases (digest, holder, taken) VALUES (p_digest, p_holder, clock_timestamp())
        ON CONFLICT (digest, holder) DO UPDATE SET taken = excluded.taken;
END
$fn$
"""

_INSERT_FUNCTION_3: Final = """
CREATE OR REPLACE FUNCTION waybook_insert(
    p_journal text, p_expected_seq bigint, p_expected_digest text,
    p_seqs bigint[], p_positions bigint[], p_digests text[], p_lines bytea[]
) RETURNS void LANGUAGE plpgsql AS $fn$
-- Insert a batch and move the journal's head row, only if the head row still is the head the batch
-- follows. The writer holds the journal row (SELECT ... FOR UPDATE), so this cannot fail for a waybook
-- writer; it fails closed if anything else has moved the head. The records go in without a feed
-- position (p_positions is ignored): the feed's sequencer numbers them once committed.
DECLARE
    n integer := cardinality(p_lines);
BEGIN
    IF n IS NULL OR n < 1 OR cardinality(p_seqs) <> n OR cardinality(p_digests) <> n
       OR p_seqs[1] <> p_expected_seq + 1 OR p_seqs[n] <> p_expected_seq + n THEN
        RAISE EXCEPTION 'waybook_insert: a batch of % must follow seq %', n, p_expected_seq
            USING ERRCODE = 'WB400';
    END IF;
    PERFORM set_config('synchronous_commit', 'on', true);
    UPDATE waybook_journals AS j SET head_seq = p_seqs[n], head_digest = p_digests[n]
     WHERE j.journal_id = p_journal AND j.head_seq = p_expected_seq AND j.head_digest = p_expected_digest
       AND j.purged IS NULL;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'waybook_insert: the head of % is no longer seq %', p_journal, p_expected_seq
            USING ERRCODE = 'WB409';
    END IF;
    INSERT INTO waybook_records (journal_id, seq, digest, line, xact)
    SELECT p_journal, r.seq, r.digest, r.line, pg_current_xact_id()::text::bigint
      FROM unnest(p_seqs, p_digests, p_lines) AS r(seq, digest, line);
END
$fn$
"""

_APPEND_FUNCTION_3: Final = """
CREATE OR REPLACE FUNCTION waybook_append(
    p_journal text, p_expected_seq bigint, p_expected_digest text, p_digests text[], p_lines bytea[]
) RETURNS boolean LANGUAGE plpgsql AS $fn$
-- Compare-and-append in one statement (so one round trip and, in autocommit, one transaction): move
-- the journal's head row only if it still is the head the writer planned against (a writer holding
-- the row makes this wait, then see the new head and match nothing), then insert the records verbatim,
-- without a feed position (the feed's sequencer numbers them once committed). No row, lock or
-- notification is shared with writers of other journals. False, with nothing written, when the head
-- has moved (or the journal is purged or unknown): the writer then takes the locked path.
DECLARE
    n integer := cardinality(p_lines);
BEGIN
    IF n IS NULL OR n < 1 OR cardinality(p_digests) <> n THEN
        RAISE EXCEPTION 'waybook_append: % lines and % digests', n, cardinality(p_digests)
            USING ERRCODE = 'WB400';
    END IF;
    PERFORM set_config('synchronous_commit', 'on', true);
    UPDATE waybook_journals AS j SET head_seq = p_expected_seq + n, head_digest = p_digests[n]
     WHERE j.journal_id = p_journal AND j.head_seq = p_expected_seq AND j.head_digest = p_expected_digest
       AND j.purged IS NULL;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    INSERT INTO waybook_records (journal_id, seq, digest, line, xact)
    SELECT p_journal, p_expected_seq + i, p_digests[i], p_lines[i], pg_current_xact_id()::text::bigint
      FROM generate_series(1, n) AS i;
    RETURN true;
END
$fn$
"""

_SEQUENCE_FUNCTION: Final = """
CREATE FUNCTION waybook_sequence() RETURNS bigint LANGUAGE plpgsql AS $fn$
-- The feed's sequencer, run by readers (never by writers): give every committed record that has no
-- feed position yet the next positions, and return the feed head. Order: by the id of the transaction
-- that wrote it (xact; a transaction that began after another committed has a larger one), then
-- journal and seq; within each journal the positions it gets are then dealt out in seq order, so a
-- journal's records are in seq order whatever ids their transactions drew. The feed clock row is the
-- sequencer's lock: held until this transaction's commit is durable, so one sequencer runs at a time,
-- each sees every position the one before it handed out, and no caller has a position before it is
-- durable. Nothing pending: one index probe, no lock, no write.
DECLARE
    head bigint;
    last bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM waybook_records WHERE position IS NULL) THEN
        RETURN (SELECT c.position FROM waybook_feed_clock AS c);
    END IF;
    PERFORM set_config('synchronous_commit', 'on', true);
    SELECT c.position INTO head FROM waybook_feed_clock AS c FOR UPDATE;
    -- A new snapshot from here on (READ COMMITTED): it sees what the previous sequencer numbered.
    WITH pending AS (
        SELECT r.journal_id, r.seq,
               row_number() OVER (ORDER BY r.xact, r.journal_id, r.seq) AS overall,
               row_number() OVER (PARTITION BY r.journal_id ORDER BY r.xact, r.seq) AS by_xact,
               row_number() OVER (PARTITION BY r.journal_id ORDER BY r.seq) AS by_seq
          FROM waybook_records AS r WHERE r.position IS NULL
    ), placed AS (
        SELECT s.journal_id, s.seq, x.overall FROM pending AS s
          JOIN pending AS x ON x.journal_id = s.journal_id AND x.by_xact = s.by_seq
    ), numbered AS (
        UPDATE waybook_records AS r SET position = head + p.overall FROM placed AS p
         WHERE r.journal_id = p.journal_id AND r.seq = p.seq AND r.position IS NULL
        RETURNING r.position
    )
    SELECT max(numbered.position) INTO last FROM numbered;
    IF last IS NULL THEN
        RETURN head;
    END IF;
    UPDATE waybook_feed_clock SET position = last;
    RETURN last;
END
$fn$
"""

_FEED_FUNCTION: Final = """
CREATE FUNCTION waybook_feed(p_after bigint, p_limit integer)
RETURNS TABLE (feed_position bigint, feed_journal text, feed_seq bigint, feed_line bytea)
LANGUAGE plpgsql AS $fn$
-- A page of the feed after p_after, in one round trip: sequence what is pending, then read. Positions
-- this call hands out commit with it: the caller has the rows only once the commit is durable.
BEGIN
    PERFORM waybook_sequence();
    RETURN QUERY SELECT r.position, r.journal_id, r.seq, r.line FROM waybook_records AS r
        WHERE r.position > p_after ORDER BY r.position LIMIT p_limit;
END
$fn$
"""

_CREATE_FUNCTION: Final = """
CREATE FUNCTION waybook_create(
    p_catalog_seq bigint, p_catalog_digest text, p_entry_digest text, p_entry_line bytea,
    p_journal text, p_role text, p_metadata text, p_created_at text,
    p_header_digest text, p_header_line bytea
) RETURNS TABLE (outcome text, line bytea) LANGUAGE plpgsql AS $fn$
-- Create a journal in one statement: unless the id is taken, append its `created` entry to the catalog
-- journal if the catalog's head is still the one the entry was sealed after (the catalog row is the
-- lock every catalog write takes, so a racing creator of the same id waits here, then finds the head
-- moved), add the journal's row and insert its header. Outcomes: 'created'; 'exists' or 'purged'
-- (nothing written); 'stale' (nothing written), followed by ('line', bytes) rows: the catalog records
-- after p_catalog_seq, so the caller can catch up and seal again.
BEGIN
    RETURN QUERY SELECT CASE WHEN j.purged IS NULL THEN 'exists' ELSE 'purged' END, NULL::bytea
        FROM waybook_journals AS j WHERE j.journal_id = p_journal;
    IF FOUND THEN
        RETURN;
    END IF;
    PERFORM set_config('synchronous_commit', 'on', true);
    UPDATE waybook_journals AS j SET head_seq = p_catalog_seq + 1, head_digest = p_entry_digest
     WHERE j.journal_id = '_catalog' AND j.head_seq = p_catalog_seq AND j.head_digest = p_catalog_digest;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'stale'::text, NULL::bytea;
        RETURN QUERY SELECT 'line'::text, r.line FROM waybook_records AS r
            WHERE r.journal_id = '_catalog' AND r.seq > p_catalog_seq ORDER BY r.seq;
        RETURN;
    END IF;
    IF p_header_line IS NULL THEN
        INSERT INTO waybook_journals (journal_id, role, metadata, created, created_at)
        VALUES (p_journal, p_role, p_metadata, p_catalog_seq + 1, p_created_at);
    ELSE
        INSERT INTO waybook_journals (journal_id, role, metadata, created, created_at, head_seq, head_digest)
        VALUES (p_journal, p_role, p_metadata, p_catalog_seq + 1, p_created_at, 1, p_header_digest);
    END IF;
    INSERT INTO waybook_records (journal_id, seq, digest, line, xact)
    VALUES ('_catalog', p_catalog_seq + 1, p_entry_digest, p_entry_line, pg_current_xact_id()::text::bigint);
    IF p_header_line IS NOT NULL THEN
        INSERT INTO waybook_records (journal_id, seq, digest, line, xact)
        VALUES (p_journal, 1, p_header_digest, p_header_line, pg_current_xact_id()::text::bigint);
    END IF;
    RETURN QUERY SELECT 'created'::text, NULL::bytea;
END
$fn$
"""

_INSERT_FUNCTION_4: Final = """
CREATE OR REPLACE FUNCTION waybook_insert(
    p_journal text, p_expected_seq bigint, p_expected_digest text,
    p_seqs bigint[], p_positions bigint[], p_digests text[], p_lines bytea[]
) RETURNS void LANGUAGE plpgsql AS $fn$
-- Insert a batch and move the journal's head row, only if the head row still is the head the batch
-- follows. The writer holds the journal row (SELECT ... FOR UPDATE), so this cannot fail for a waybook
-- writer; it fails closed if anything else has moved the head. The records go in without a feed
-- position (p_positions is ignored: the feed's sequencer numbers them once committed) and without
-- their digests (each line ends with its own; p_digests gives the new head's).
DECLARE
    n integer := cardinality(p_lines);
BEGIN
    IF n IS NULL OR n < 1 OR cardinality(p_seqs) <> n OR cardinality(p_digests) <> n
       OR p_seqs[1] <> p_expected_seq + 1 OR p_seqs[n] <> p_expected_seq + n THEN
        RAISE EXCEPTION 'waybook_insert: a batch of % must follow seq %', n, p_expected_seq
            USING ERRCODE = 'WB400';
    END IF;
    PERFORM set_config('synchronous_commit', 'on', true);
    UPDATE waybook_journals AS j SET head_seq = p_seqs[n], head_digest = p_digests[n]
     WHERE j.journal_id = p_journal AND j.head_seq = p_expected_seq AND j.head_digest = p_expected_digest
       AND j.purged IS NULL;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'waybook_insert: the head of % is no longer seq %', p_journal, p_expected_seq
            USING ERRCODE = 'WB409';
    END IF;
    INSERT INTO waybook_records (journal_id, seq, line, xact)
    SELECT p_journal, r.seq, r.line, pg_current_xact_id()::text::bigint
      FROM unnest(p_seqs, p_lines) AS r(seq, line);
END
$fn$
"""

_APPEND_FUNCTION_4: Final = """
CREATE OR REPLACE FUNCTION waybook_append(
    p_journal text, p_expected_seq bigint, p_expected_digest text, p_digests text[], p_lines bytea[]
) RETURNS boolean LANGUAGE plpgsql AS $fn$
-- Compare-and-append in one statement (so one round trip and, in autocommit, one transaction): move
-- the journal's head row only if it still is the head the writer planned against (a writer holding
-- the row makes this wait, then see the new head and match nothing), then insert the records verbatim,
-- without a feed position (the feed's sequencer numbers them once committed) or a digest column (each
-- line ends with its digest; p_digests gives the new head's). False, with nothing written, when the
-- head has moved (or the journal is purged or unknown): the writer then takes the locked path.
DECLARE
    n integer := cardinality(p_lines);
BEGIN
    IF n IS NULL OR n < 1 OR cardinality(p_digests) <> n THEN
        RAISE EXCEPTION 'waybook_append: % lines and % digests', n, cardinality(p_digests)
            USING ERRCODE = 'WB400';
    END IF;
    PERFORM set_config('synchronous_commit', 'on', true);
    UPDATE waybook_journals AS j SET head_seq = p_expected_seq + n, head_digest = p_digests[n]
     WHERE j.journal_id = p_journal AND j.head_seq = p_expected_seq AND j.head_digest = p_expected_digest
       AND j.purged IS NULL;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    INSERT INTO waybook_records (journal_id, seq, line, xact)
    SELECT p_journal, p_expected_seq + i, p_lines[i], pg_current_xact_id()::text::bigint
      FROM generate_series(1, n) AS i;
    RETURN true;
END
$fn$
"""

LINE_DIGEST: Final = "convert_from(substring({line} FROM octet_length({line}) - 65 FOR 64), 'SQL_ASCII')"
"""SQL for the digest a stored line ends with (`,"digest":"<64 hex>"}`: the 64 bytes before the last
two), as text; `{line}` is the line's column or expression. What the dropped `digest` column held."""

MIGRATIONS: Final[tuple[Migration, ...]] = (
    Migration(
        1,
        "journals with their head rows, records, the feed clock, the checked insert",
        (
            f"""CREATE TABLE waybook_journals (
                journal_id text PRIMARY KEY,
                role text NOT NULL,
                metadata text NOT NULL,
                created bigint NOT NULL,
                created_at text NOT NULL,
                hidden boolean NOT NULL DEFAULT false,
                purged bigint,
                head_seq bigint NOT NULL DEFAULT 0 CHECK (head_seq >= 0),
                head_digest text NOT NULL DEFAULT '{GENESIS_DIGEST}'
            )""",
            "CREATE INDEX waybook_journals_by_creation ON waybook_journals (created)",
            """CREATE TABLE waybook_records (
                journal_id text NOT NULL,
                seq bigint NOT NULL CHECK (seq > 0),
                position bigint NOT NULL,
                digest text NOT NULL,
                line bytea NOT NULL,
                PRIMARY KEY (journal_id, seq)
            )""",
            "CREATE UNIQUE INDEX waybook_records_by_position ON waybook_records (position)",
            """CREATE TABLE waybook_feed_clock (
                only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
                position bigint NOT NULL
            )""",
            "INSERT INTO waybook_feed_clock (position) VALUES (0)",
            """CREATE FUNCTION waybook_channel() RETURNS text LANGUAGE sql STABLE AS
               $fn$ SELECT 'waybook_feed_' || left(md5(current_schema()), 16) $fn$""",
            _INSERT_FUNCTION,
            _APPEND_FUNCTION,
        ),
    ),
    Migration(
        2,
        "blobs: one row per blob, its bytes in parts, and writers' leases (waybook/stores/postgres/blobs.py)",
        (
            "CREATE SEQUENCE waybook_blob_ids",
            """CREATE TABLE waybook_blobs (
                id bigint PRIMARY KEY,
                digest text NOT NULL UNIQUE CHECK (digest ~ '^[0-9a-f]{64}$'),
                size bigint NOT NULL CHECK (size >= 0),
                parts integer NOT NULL CHECK (parts >= 0),
                media_type text NOT NULL,
                stored timestamptz NOT NULL
            )""",
            """CREATE TABLE waybook_blob_parts (
                blob bigint NOT NULL
                    REFERENCES waybook_blobs (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
                part integer NOT NULL CHECK (part >= 0),
                bytes bytea NOT NULL,
                PRIMARY KEY (blob, part)
            )""",
            """CREATE TABLE waybook_blob_leases (
                digest text NOT NULL,
                holder text NOT NULL,
                taken timestamptz NOT NULL,
                PRIMARY KEY (digest, holder)
            )""",
            _BLOB_KEEP_FUNCTION,
            _BLOB_ADD_FUNCTION,
        ),
    ),
    Migration(
        3,
        "writers insert records without a feed position and notify no one; readers' sequencer numbers"
        " them; create in one statement",
        (
            "ALTER TABLE waybook_records ALTER COLUMN position DROP NOT NULL",
            "ALTER TABLE waybook_records ADD COLUMN xact bigint",
            # Only numbered records are in the position index: an append inserts into no index it
            # does not need (the sequencer adds the entry when it numbers the record).
            "DROP INDEX waybook_records_by_position",
            "CREATE UNIQUE INDEX waybook_records_by_position ON waybook_records (position)"
            " WHERE position IS NOT NULL",
            "CREATE INDEX waybook_records_unsequenced ON waybook_records (journal_id, seq)"
            " WHERE position IS NULL",
            _APPEND_FUNCTION_3,
            _INSERT_FUNCTION_3,
            _SEQUENCE_FUNCTION,
            _FEED_FUNCTION,
            _CREATE_FUNCTION,
        ),
    ),
    Migration(
        4,
        "records without a digest column (each line ends with its digest); creates without waybook_create",
        (
            _APPEND_FUNCTION_4,
            _INSERT_FUNCTION_4,
            # Creates are one plain statement now (`_engine._CREATE`), as appends are.
            "DROP FUNCTION waybook_create(bigint, text, text, bytea, text, text, text, text, text, bytea)",
            # Metadata only: rows written before keep the bytes until rewritten; new rows store none.
            "ALTER TABLE waybook_records DROP COLUMN digest",
        ),
    ),
)

LATEST: Final = MIGRATIONS[-1].version

_LOCK_KEY: Final = "SELECT pg_advisory_xact_lock(hashtextextended('waybook:' || current_schema(), 0))"


def migrate(
    conn: psycopg.Connection[tuple[Any, ...]], *, migrations: Sequence[Migration] = MIGRATIONS
) -> int:
    """Bring the current schema to the latest version (idempotent); return the version it is at.

    Raises SchemaTooNewError, having changed nothing, if the database was migrated by newer code.
    """
    known = migrations[-1].version if migrations else 0
    at = installed_version(conn)
    if at == known:
        return at  # nothing to change: no lock, no DDL (a read-only role or a hot standby opens here)
    if at is not None and at > known:
        raise SchemaTooNewError(found=at, known=known, schema=current_schema(conn) or "")
    if read_only(conn):
        msg = (
            f"the store's schema is at version {at or 0} and this waybook needs {known}; this connection "
            "cannot change it (a read-only role, a read-only transaction or a hot standby): open the "
            "store once through a writer on the primary to migrate it"
        )
        raise StorageError(msg)
    with conn.transaction():
        if current_schema(conn) is None:
            msg = (
                "the connection has no current schema: the schema named first in search_path does not "
                "exist; create it (CREATE SCHEMA name) or point options=-c search_path=... at one that does"
            )
            raise StorageError(msg)
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


def installed_version(conn: psycopg.Connection[tuple[Any, ...]]) -> int | None:
    """The schema version the current schema holds (None: no waybook_schema table there yet, or
    nothing this role may read).

    One statement: every store open starts with this on a new connection, where it was four round
    trips (BEGIN, a look for the table, the read, COMMIT). A missing or unreadable table fails the
    statement, which is the answer; in a transaction it runs in a savepoint, which the failure ends."""
    idle = conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE and conn.autocommit
    try:
        with contextlib.nullcontext() if idle else conn.transaction():
            found = conn.execute("SELECT coalesce(max(version), 0) FROM waybook_schema").fetchone()
    except (psycopg.errors.UndefinedTable, psycopg.errors.InsufficientPrivilege):
        return None
    return int(found[0]) if found else 0


def read_only(conn: psycopg.Connection[tuple[Any, ...]]) -> bool:
    """Whether this connection cannot write: a hot standby, or read-only transactions by default."""
    row = conn.execute(
        "SELECT pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on'"
    ).fetchone()
    return bool(row and row[0])


def current_schema(conn: psycopg.Connection[tuple[Any, ...]]) -> str | None:
    row = conn.execute("SELECT current_schema()").fetchone()
    return None if row is None or row[0] is None else str(row[0])
