"""The JSONL adapter's wing: one journal per file, one canonical record per line.

What the rest of waybook may use of it is this face; which modules may import it at all is an
import-linter `protected` contract in pyproject.toml (the journal package's face, which exports
`JsonlJournal`, `JsonlOptions`, `RepairReceipt` and `verify_file`, and the directory store). Its rooms:

- `_journal`: `JsonlJournal` (appends, reads, syncing) and `verify_file`;
- `_options`: `JsonlOptions`, the one value of a journal's options;
- `_open`: what an open proves, keeping up with other writers, repair (`ProvedFile`);
- `_scan` and `_chunk_proof`: the streaming proof of a file's bytes and its torn-tail verdict;
- `_checkpoint`: the `.checkpoint` sidecar that lets a reopen prove only the tail;
- `_erase`: erasing content in place, and the `.erasing` marker that lets an open finish an erasure a
  crash interrupted (docs/erasure.md);
- `_repair` and `_quarantine`: cutting a torn tail off into a quarantine file;
- `_file`, `_file_ops`, `_group_commit`: the open descriptor, the system-call seam crash tests
  replace, and fsyncs shared among threads.
"""

from waybook.journal._jsonl._checkpoint import checkpoint_path
from waybook.journal._jsonl._erase import marker_path as erasure_marker_path
from waybook.journal._jsonl._file_ops import OS_FILE_OPS, FileOps
from waybook.journal._jsonl._journal import JsonlJournal, verify_file
from waybook.journal._jsonl._options import JsonlOptions
from waybook.journal._jsonl._quarantine import RepairReceipt

__all__ = [
    "OS_FILE_OPS",
    "FileOps",
    "JsonlJournal",
    "JsonlOptions",
    "RepairReceipt",
    "checkpoint_path",
    "erasure_marker_path",
    "verify_file",
]
