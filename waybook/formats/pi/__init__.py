"""The Pi coding agent's session JSONL: import to and export from waybook records, losing nothing; and
imported as it grows (`GrowingPi`)."""

from waybook.formats.pi._codec import (
    NO_PLACES,
    PiFormatError,
    PiImport,
    export_pi,
    import_pi,
)
from waybook.formats.pi._growing import GrowingPi

__all__ = [
    "export_pi",
    "GrowingPi",
    "import_pi",
    "NO_PLACES",
    "PiFormatError",
    "PiImport",
]
