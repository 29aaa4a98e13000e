"""Training rows as Hugging Face `datasets` take them: the features of each format, and a dataset folder.

`features(fmt)` gives the `datasets.Features` of a format's rows. Message lists and tool lists hold JSON
whose shape differs from session to session (each tool's JSON Schema, each call's arguments), which Arrow
cannot hold in one struct type: `datasets` infers a schema from the first file it reads and refuses the
next file whose tools differ. With these features (messages and tools as `List(Json())`) any number of
export files load in one call:

    datasets.load_dataset("json", data_files=[...], features=waybook.export.hf.features("trl-sft"))

`write_dataset(rows, directory, fmt=..., card=...)` writes a dataset folder `datasets.load_dataset(DIR)`
reads: `data/train-NNNNN-of-NNNNN.parquet` shards (every shard with the same schema), and a `README.md`
dataset card whose YAML header names the features, the split and its row count, and whose text says
where the rows came from and whether they were redacted. Needs the `datasets` extra
(`pip install 'waybook[datasets]'`).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

__all__ = ["FORMATS", "SHARD_ROWS", "DatasetsMissingError", "features", "write_dataset"]

FORMATS: Final = ("openai", "openai-dpo", "trl-sft", "trl-turns", "trl-dpo", "trl-kto", "sharegpt")
"""The row formats `features` knows (`trl-turns`: `--format trl-sft --turns`, prompt/completion rows)."""
SHARD_ROWS: Final = 10_000
"""Rows per Parquet shard."""


class DatasetsMissingError(ImportError):
    """`waybook.export.hf` was used without Hugging Face `datasets` installed."""


def _datasets() -> Any:
    try:
        import datasets
    except ImportError:
        msg = (
            "waybook.export.hf needs Hugging Face datasets (module 'datasets' is not installed): "
            "pip install 'waybook[datasets]'"
        )
        raise DatasetsMissingError(msg) from None
    return datasets


def features(fmt: str, *, metadata: bool = False) -> Any:
    """The `datasets.Features` of `fmt`'s rows (`metadata`: rows carry provenance, `--metadata`)."""
    ds = _datasets()
    json_list = ds.List(ds.Json())
    columns: dict[str, Any]
    if fmt == "openai":
        columns = {"messages": json_list, "tools": json_list, "parallel_tool_calls": ds.Value("bool")}
    elif fmt == "openai-dpo":
        columns = {"input": ds.Json(), "preferred_output": json_list, "non_preferred_output": json_list}
    elif fmt == "trl-sft":
        columns = {"messages": json_list, "tools": json_list, "outcome": ds.Value("string")}
    elif fmt == "trl-turns":
        columns = {"prompt": json_list, "completion": json_list, "tools": json_list}
    elif fmt == "trl-dpo":
        columns = {"prompt": json_list, "chosen": json_list, "rejected": json_list, "tools": json_list}
    elif fmt == "trl-kto":
        columns = {
            "prompt": json_list,
            "completion": json_list,
            "label": ds.Value("bool"),
            "tools": json_list,
        }
    elif fmt == "sharegpt":
        turn = {"from": ds.Value("string"), "value": ds.Value("string")}
        columns = {"conversations": ds.List(turn), "system": ds.Value("string"), "tools": ds.Value("string")}
    else:
        msg = f"no features for format {fmt!r}: choose one of {', '.join(FORMATS)}"
        raise ValueError(msg)
    if metadata:
        columns["metadata"] = ds.Json()
    return ds.Features(columns)


def write_dataset(
    rows: Iterable[dict[str, Any]],
    directory: str | os.PathLike[str],
    *,
    fmt: str,
    card: Mapping[str, Any],
    metadata: bool = False,
    force: bool = False,
) -> int:
    """Write `rows` as a dataset folder at `directory` (created 0700, files 0600, moved into place whole:
    a folder is never seen half written); returns the row count. `card` holds what the dataset card
    says beyond features and counts: `title`, `provenance` (lines), `redaction` (a sentence), `dropped`
    (reason -> count). An existing `directory` is refused unless `force`, then replaced."""
    ds = _datasets()
    target = Path(directory)
    if target.exists() and not force:
        msg = f"{target} exists; choose a new directory, or pass force=True (--force) to replace it"
        raise FileExistsError(msg)
    target.parent.mkdir(parents=True, exist_ok=True)
    schema = features(fmt, metadata=metadata)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        (staging / "data").mkdir(mode=0o700)
        chunks: list[list[dict[str, Any]]] = [[]]
        for row in rows:
            if len(chunks[-1]) == SHARD_ROWS:
                chunks.append([])
            chunks[-1].append(row)
        count = sum(len(chunk) for chunk in chunks)
        for index, chunk in enumerate(chunks):
            shard = staging / "data" / f"train-{index:05d}-of-{len(chunks):05d}.parquet"
            ds.Dataset.from_list(chunk, features=schema).to_parquet(str(shard))
            shard.chmod(0o600)
        readme = staging / "README.md"
        readme.write_text(_card(schema, count, fmt, card), encoding="utf-8")
        readme.chmod(0o600)
        if target.exists():
            _remove(target)
        staging.rename(target)
    except BaseException:
        _remove(staging)
        raise
    return count


def _card(schema: Any, count: int, fmt: str, card: Mapping[str, Any]) -> str:
    header = {
        "configs": [{"config_name": "default", "data_files": [{"split": "train", "path": "data/train-*"}]}],
        "dataset_info": {
            "features": schema._to_yaml_list(),
            "splits": [{"name": "train", "num_examples": count}],
        },
        "tags": ["waybook", fmt],
    }
    lines = [
        "---",
        json.dumps(header, indent=2, ensure_ascii=False),  # JSON is YAML: the card's header, written exactly
        "---",
        "",
        f"# {card.get('title', 'waybook export')}",
        "",
        f"{count} rows in waybook's `{fmt}` format (docs/export.md), one split (`train`).",
        "",
        "## Provenance",
        "",
        *[f"- {line}" for line in card.get("provenance", ())],
        "",
        "## Redaction",
        "",
        str(card.get("redaction", "not stated")),
        "",
    ]
    dropped = card.get("dropped") or {}
    if dropped:
        lines += ["## Left out to keep every row valid", ""]
        lines += [f"- {reason}: {n}" for reason, n in sorted(dropped.items())]
        lines.append("")
    return "\n".join(lines)


def _remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
