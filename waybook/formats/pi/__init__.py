"""The Pi coding agent's session JSONL: import to and export from waybook records, losing nothing."""

from waybook.formats.pi._codec import (
    PiFormatError,
    PiImport,
    export_pi,
    import_pi,
)

__all__ = [
    "PiFormatError",
    "PiImport",
    "export_pi",
    "import_pi",
]
