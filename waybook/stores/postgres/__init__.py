"""The PostgreSQL store (`postgresql://...`); needs the `postgresql` extra (psycopg 3, psycopg_pool)."""

from waybook.stores.postgres._aio import open_async_postgres
from waybook.stores.postgres._engine import PostgresEngine
from waybook.stores.postgres._errors import ConnectionLostError, SchemaTooNewError
from waybook.stores.postgres._schema import LATEST as SCHEMA_VERSION
from waybook.stores.postgres._store import PostgresJournal, PostgresStore, open_postgres

__all__ = [
    "SCHEMA_VERSION",
    "ConnectionLostError",
    "PostgresEngine",
    "PostgresJournal",
    "PostgresStore",
    "SchemaTooNewError",
    "open_async_postgres",
    "open_postgres",
]
