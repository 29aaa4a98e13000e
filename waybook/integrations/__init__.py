"""Thin adapters to other runtimes' interfaces; each imports its runtime lazily and is an extra."""
