"""The memory-core tools: the compiled memory block, prompt layers, the memory index and the reflection
scheduler."""

from waybook.memory.tools._block import (
    MemoryBlock,
    compile_block,
    render_block,
)
from waybook.memory.tools._layers import (
    PromptLayer,
    PromptLayers,
    prompt_layers,
    record_prompt,
)

__all__ = [
    "MemoryBlock",
    "PromptLayer",
    "PromptLayers",
    "compile_block",
    "prompt_layers",
    "record_prompt",
    "render_block",
]
