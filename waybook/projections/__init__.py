"""Projections: pure folds of session journals (tree, context, trajectories), snapshots, time travel."""

from waybook.projections._base import (
    LiveProjection,
    Projection,
    ProjectionOrderError,
    fold,
    replay,
)
from waybook.projections._context import (
    COMPACTION_PREAMBLE,
    ContextMessage,
    ContextProjection,
    ContextRefs,
    ContextState,
    Trajectory,
    context_at,
    context_refs,
    render_context,
    render_context_from,
    trajectory,
)
from waybook.projections._snapshots import (
    SNAPSHOT_TAG,
    SnapshotStore,
    at_seq,
    check_belongs,
    decode_snapshot,
    encode_snapshot,
    restore,
)
from waybook.projections._stats import BranchStats, SessionStats, Tally, session_stats
from waybook.projections._timeline import Timeline
from waybook.projections._tree import Branch, LeafMove, TreeProjection, TreeState
from waybook.projections._usage import ContextUsage, RequestContext, context_usage, usage_tokens

__all__ = [
    "BranchStats",
    "SessionStats",
    "Tally",
    "session_stats",
    "COMPACTION_PREAMBLE",
    "SNAPSHOT_TAG",
    "Branch",
    "ContextMessage",
    "ContextProjection",
    "ContextRefs",
    "ContextState",
    "ContextUsage",
    "LeafMove",
    "LiveProjection",
    "Projection",
    "ProjectionOrderError",
    "RequestContext",
    "SnapshotStore",
    "Timeline",
    "Trajectory",
    "TreeProjection",
    "TreeState",
    "at_seq",
    "check_belongs",
    "context_at",
    "context_refs",
    "context_usage",
    "decode_snapshot",
    "encode_snapshot",
    "fold",
    "render_context",
    "render_context_from",
    "replay",
    "restore",
    "trajectory",
    "usage_tokens",
]
