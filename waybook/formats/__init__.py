"""Foreign formats: other agents' sessions imported to waybook records and exported from them.

Each format is one module or sub-package. Outside data is decoded as data, never as objects. A format
that keeps sessions in folders walks them itself (`waybook.formats.claude_code.import_folder`,
`waybook.formats.codex.import_folder`, `waybook.formats.opencode.read_opencode`), reading regular files
only (`RefusedFileError` otherwise). An import that writes sessions with their sub-agents' sessions
links them both ways (`linked_both_ways`: each sub-agent's header names the session that started it).
Claude Code, Codex and Pi imports also grow with their files, a line at a time (`GrowingImport`:
`claude_code.GrowingTranscript`, `codex.GrowingRollout`, `pi.GrowingPi`), for `waybook watch`, which
reads them as complete lines (`JsonLines`, `complete_lines`). What the CLI asks of the formats: which
format a file or folder holds (`detect_format`, `detect_folder_format`, `import_hint`), an agent's file
read only when it is a regular file (`check_regular`, `read_regular`, `read_regular_from`), and the
session a sub-agent names as its parent (`naming_parent`)."""

from waybook.formats._detect import detect_folder_format, detect_format, import_hint
from waybook.formats._folders import (
    FolderImport,
    ImportedJournal,
    ImportedSession,
    SkippedFile,
    SourceFileError,
)
from waybook.formats._foreign import (
    ForeignFormatError,
    ImportReport,
)
from waybook.formats._growing import GrowingImport, JsonLines, complete_lines
from waybook.formats._source_files import RefusedFileError, check_regular, read_regular, read_regular_from
from waybook.formats._subagent_links import linked_both_ways, naming_parent
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
from waybook.formats.opencode import (
    import_opencode,
)
from waybook.formats.pi import (
    export_pi,
    import_pi,
)

__all__ = [
    "check_regular",
    "complete_lines",
    "detect_folder_format",
    "detect_format",
    "export_pi",
    "FolderImport",
    "ForeignFormatError",
    "GrowingImport",
    "import_claude_code",
    "import_codex",
    "import_hint",
    "import_langgraph",
    "import_openai_agents",
    "import_opencode",
    "import_pi",
    "ImportedJournal",
    "ImportedSession",
    "ImportReport",
    "JsonLines",
    "linked_both_ways",
    "naming_parent",
    "read_regular",
    "read_regular_from",
    "RefusedFileError",
    "SkippedFile",
    "SourceFileError",
]
