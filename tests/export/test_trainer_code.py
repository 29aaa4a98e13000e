"""Issue 45: training rows through the trainers' own code: transformers' `apply_chat_template` and TRL's
data utilities, with a tokenizer built offline.

No model is downloaded: the tokenizer is a word-level `tokenizers` model built from the rows themselves,
wrapped in transformers' `PreTrainedTokenizerFast` with a tool-aware chat template (tools listed in the
system turn, each call's name and JSON arguments, tool results, `reasoning_content` in a think block), the
kind of template Qwen and Llama ship. TRL's `trl.data_utils` imports without torch, so its
`apply_chat_template` (what SFT, DPO and KTO trainers call on each example) runs on every shape. These
packages are not in the `test` extra (transformers is large, and TRL pulls in torch through accelerate):
`scripts/trainer_suite.sh` installs them (TRL with --no-deps) and runs this module; the default run skips
it where they are missing.
"""

from __future__ import annotations

import importlib
import json
import os
import re
from typing import Any

import pytest

# In the suite (scripts/trainer_suite.sh) a missing package fails the run; elsewhere it skips the module.
need = importlib.import_module if os.environ.get("WAYBOOK_TRAINER_SUITE") else pytest.importorskip
transformers = need("transformers")
tokenizers = need("tokenizers")
trl_data = need("trl.data_utils")

from tests.helpers.formats import real_session, real_session_files  # noqa: E402
from tests.helpers.sessions import branching_session, chosen_retry  # noqa: E402
from waybook.export._cleaning import TrainingOptions  # noqa: E402
from waybook.export.trajectories import Selection, TrajectoryExporter  # noqa: E402

TEMPLATE = """
{%- if tools %}<|system|>You may call these tools:
{% for tool in tools %}{{ tool | tojson }}
{% endfor %}<|end|>
{% endif -%}
{%- for message in messages -%}
<|{{ message.role }}|>
{%- if message.reasoning_content %}<think>{{ message.reasoning_content }}</think>{% endif -%}
{{ message.content if message.content is string else '' }}
{%- for call in message.tool_calls or [] -%}
<tool_call>{"name": {{ call.function.name | tojson }}, "arguments": {{ call.function.arguments | tojson }}}
{#- one call per line, arguments as JSON -#}</tool_call>
{%- endfor -%}
<|end|>
{% endfor -%}
{%- if add_generation_prompt %}<|assistant|>{% endif -%}
"""


def tokenizer_for(texts: list[str]) -> Any:
    model = tokenizers.models.WordLevel(unk_token="[UNK]")
    raw = tokenizers.Tokenizer(model)
    raw.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    trainer = tokenizers.trainers.WordLevelTrainer(special_tokens=["[UNK]", "<|end|>"])
    raw.train_from_iterator(texts, trainer=trainer)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="[UNK]", eos_token="<|end|>")
    fast.chat_template = TEMPLATE
    return fast


def sessions() -> list[Any]:
    found = [chosen_retry(branching_session())]
    found += [real_session(p) for p in real_session_files() if "pi" in p.parts or "spotter" in p.parts][:6]
    return found


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    texts = [
        str(row)
        for journal in sessions()
        for row in TrajectoryExporter(journal).rows("trl-sft", Selection("all"))
    ]
    return tokenizer_for(texts or ["hello"])


def test_every_sft_row_with_tools_renders_through_apply_chat_template(tokenizer: Any) -> None:
    rendered = 0
    for journal in sessions():
        exporter = TrajectoryExporter(journal, options=TrainingOptions(thinking="field"))
        for row in exporter.rows("trl-sft", Selection("all")):
            text = tokenizer.apply_chat_template(row["messages"], tools=row["tools"], tokenize=False)
            for message in row["messages"]:
                assert message["content"] in text
            calls = [c for m in row["messages"] for c in m.get("tool_calls") or ()]
            shown = [json.loads(c) for c in re.findall(r"<tool_call>(.*?)</tool_call>", text, re.S)]
            assert shown == [
                {"name": c["function"]["name"], "arguments": c["function"]["arguments"]} for c in calls
            ]
            assert all(isinstance(c["arguments"], dict) for c in shown)  # objects, as templates read them
            encoded = tokenizer.apply_chat_template(
                row["messages"], tools=row["tools"], tokenize=True, return_dict=True
            )
            assert len(encoded["input_ids"]) > len(row["messages"])
            rendered += bool(row["tools"])
    assert rendered


def test_trl_applies_its_chat_template_to_every_shape(tokenizer: Any) -> None:
    journal = chosen_retry(branching_session())
    exporter = TrajectoryExporter(journal)
    shapes = [
        *exporter.rows("trl-sft", Selection("all")),
        *exporter.turns(Selection("all"), "trl-sft"),
        *TrajectoryExporter(journal).pairs("trl-dpo"),
        *TrajectoryExporter(journal).pairs("trl-kto"),
    ]
    assert {frozenset(row) for row in shapes} == {
        frozenset({"messages", "tools", "outcome"}),
        frozenset({"prompt", "completion", "tools"}),
        frozenset({"prompt", "chosen", "rejected", "tools"}),
        frozenset({"prompt", "completion", "label", "tools"}),
    }
    for row in shapes:
        example = {k: v for k, v in row.items() if k not in ("tools", "outcome")}
        assert trl_data.is_conversational(example)
        out = trl_data.apply_chat_template(example, tokenizer, tools=row["tools"])
        for key in ("prompt", "completion", "chosen", "rejected"):
            if key in example and key != "prompt":
                assert out[key].strip(), key
        if "messages" in example:
            assert out["text"].strip()
