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
from waybook.projections._provider_turns import NO_RESULT_RECORDED, REPAIR_KINDS, Repair, RepairKind
from waybook.projections._providers import (
    PROVIDERS,
    Provider,
    ProviderContext,
    UnknownProviderError,
    for_provider,
    provider_context,
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
    "NO_RESULT_RECORDED",
    "PROVIDERS",
    "REPAIR_KINDS",
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
    "Provider",
    "ProviderContext",
    "Repair",
    "RepairKind",
    "RequestContext",
    "SnapshotStore",
    "Timeline",
    "Trajectory",
    "TreeProjection",
    "TreeState",
    "UnknownProviderError",
    "at_seq",
    "check_belongs",
    "context_at",
    "context_refs",
    "context_usage",
    "decode_snapshot",
    "encode_snapshot",
    "fold",
    "for_provider",
    "provider_context",
    "render_context",
    "render_context_from",
    "replay",
    "restore",
    "trajectory",
    "usage_tokens",
]
