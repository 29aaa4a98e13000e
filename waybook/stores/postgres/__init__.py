"""The PostgreSQL store (`postgresql://...`); needs the `postgresql` extra (psycopg 3, psycopg_pool)."""

from waybook.stores.postgres.engine import PostgresEngine
from waybook.stores.postgres.errors import ConnectionLostError, SchemaTooNewError
from waybook.stores.postgres.schema import LATEST as SCHEMA_VERSION
from waybook.stores.postgres.store import PostgresJournal, PostgresStore, open_postgres

__all__ = [
    "SCHEMA_VERSION",
    "ConnectionLostError",
    "PostgresEngine",
    "PostgresJournal",
    "PostgresStore",
    "SchemaTooNewError",
    "open_postgres",
]
