"""Ranked full-text search over a store's journals (docs/search.md)."""

from waybook.search._documents import Document, document_of
from waybook.search._index import Hit, SearchError, SearchIndex, default_index_path

__all__ = ["Document", "Hit", "SearchError", "SearchIndex", "default_index_path", "document_of"]
