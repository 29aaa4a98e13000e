"""Thin adapters from other runtimes' interfaces onto waybook journals (docs/langgraph.md, ...).

Each integration is its own module, imports its runtime only when that module is imported, and ships
as an extra (`pip install 'waybook[langgraph]'`). The core package never imports them.
"""
