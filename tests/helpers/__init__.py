"""Test helpers shared across test files, one module per idea. A helper used by more than one test file
lives here, never in a test module another test imports.

- builders: record builders (the contract kit's, waybook.testing) and fresh ids
- sessions: sessions built for projection and export tests, and the golden exports
- faults: fault-injecting file layers for the JSONL adapter
- wire_samples: one body of every wire tag, and the golden wire fixtures
- formats, pi, claude_code: shared fixture files, and lines of other agents' session formats
- pg_server, pg_fixtures: the PostgreSQL server the tests start or find, and its pytest fixtures
- tcp_cutter: a TCP proxy that cuts connections, for the PostgreSQL fault tests
- session_steps: random sessions for property tests (hypothesis steps and the session they write)
- adk: Google ADK events for the ADK adapter's tests
- authority: the canonical memory authority's test doubles, and the exact state of a host call in line

- paths: the checkout's root, its fixtures and the shared fixtures beside it
- cli_runner: the `waybook` command run in-process (and the installed program for smoke tests)
- value_samples: the golden journal of application values

Programs the tests run as processes: tests/helpers/process_writer.py, tests/stores/*_writer.py.
"""
