"""Thin adapters that let other agent runtimes keep their own interfaces on waybook stores."""
