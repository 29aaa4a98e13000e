"""Foreign formats: other agents' sessions imported to waybook records and exported from them.

Each format is one module or sub-package. Outside data is decoded as data, never as objects."""

from waybook.formats._foreign import (
    ForeignFormatError,
    ImportReport,
)
from waybook.formats.claude_code import (
    import_claude_code,
)
from waybook.formats.codex import (
    import_codex,
)
from waybook.formats.langgraph import (
    import_langgraph,
)
from waybook.formats.openai_agents import (
    import_openai_agents,
)
from waybook.formats.pi import (
    export_pi,
    import_pi,
)

__all__ = [
    "ForeignFormatError",
    "ImportReport",
    "export_pi",
    "import_claude_code",
    "import_codex",
    "import_langgraph",
    "import_openai_agents",
    "import_pi",
]
