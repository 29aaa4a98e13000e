"""The memory-core tools: the compiled memory block, prompt layers, the memory index, the reflection
scheduler, an identity's home, seed blocks and reminders."""

from waybook.memory.tools._block import (
    DEFAULT_TEMPLATE,
    BlockCache,
    BlockTemplate,
    MemoryBlock,
    compile_block,
    render_block,
)
from waybook.memory.tools._checked import CheckedOutcome, ReflectionBranch
from waybook.memory.tools._home import (
    MemoryHome,
    default_store_url,
    home,
    journal_ids,
    waybook_home,
)
from waybook.memory.tools._index import (
    MemoryIndex,
    MemoryRequiredError,
    MemoryUnavailable,
    Policy,
    load_index,
    render_index,
    replay_index,
)
from waybook.memory.tools._layers import (
    ContextContribution,
    PromptLayer,
    PromptLayers,
    prompt_layers,
    record_prompt,
)
from waybook.memory.tools._reminders import Reminder, Reminders, reminders
from waybook.memory.tools._seed import DEFAULT_BLOCKS, SeedBlock, SeedReceipt, seed_blocks
from waybook.memory.tools._transitions import (
    SessionActivity,
    complete_transition,
    evaluate_transitions,
    reserve_transition,
    start_transition,
)

__all__ = [
    "SessionActivity",
    "complete_transition",
    "evaluate_transitions",
    "reserve_transition",
    "start_transition",
    "CheckedOutcome",
    "ReflectionBranch",
    "DEFAULT_TEMPLATE",
    "BlockCache",
    "BlockTemplate",
    "DEFAULT_BLOCKS",
    "MemoryHome",
    "Reminder",
    "Reminders",
    "SeedBlock",
    "SeedReceipt",
    "default_store_url",
    "home",
    "journal_ids",
    "reminders",
    "seed_blocks",
    "waybook_home",
    "MemoryBlock",
    "ContextContribution",
    "PromptLayer",
    "PromptLayers",
    "compile_block",
    "prompt_layers",
    "record_prompt",
    "render_block",
    "MemoryIndex",
    "MemoryRequiredError",
    "MemoryUnavailable",
    "Policy",
    "load_index",
    "render_index",
    "replay_index",
]
