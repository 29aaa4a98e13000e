"""Issue 20: exports read what the journal keeps as blobs. Images become data URLs in OpenAI rows (where
OpenAI takes them, attached as Pi attaches a tool's), large text comes back inline or by reference, and
the Pi codec keeps Pi's images as blobs in a store and gives the exact bytes back on export."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli_runner import waybook
from waybook import Session
from waybook._offload import images_as_blobs, images_from_blobs
from waybook.export._cleaning import TrainingOptions
from waybook.export._openai_format import problems
from waybook.export._rows import SEE_ATTACHED, TOOL_IMAGES_INTRO
from waybook.export.trajectories import PREFERENCE, Selection, TrajectoryExporter, encode_row
from waybook.formats.pi._codec import import_pi
from waybook.journal import InMemoryJournal, JsonlJournal
from waybook.model import Annotation, BlobBlock, ImageBlock, TextBlock, ToolCallBlock
from waybook.stores import open_store
from waybook.stores._blobs import IMAGE_PREFIX, MissingBlobError, NoBlobStoreError

PNG = b"\x89PNG\r\n\x1a\n" + os.urandom(300)
JPEG = b"\xff\xd8\xff\xe0" + os.urandom(200)
BIG_LOG = "".join(f"line {n}: compiler output\n" for n in range(40_000))  # about 1 MB, over the limit


def data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode()}"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Any]:
    with open_store(f"file:{tmp_path / 'store'}") as opened:
        yield opened


def screenshot_session(store: Any) -> Any:
    """A user shows an image kept as a blob; a tool returns a screenshot and a huge log; the assistant
    answers. The session offloads everything over its inline limit to the store's blobs."""
    shot = store.blobs.put(PNG, media_type="image/png")
    session = Session.create(store.create("shots"), blobs=store.blobs)
    session.user(
        [
            TextBlock(text="What is on screen?"),
            ImageBlock(source=IMAGE_PREFIX + shot.digest, media_type="image/png"),
        ]
    )
    session.assistant(
        [ToolCallBlock(call_id="c1", name="screenshot"), ToolCallBlock(call_id="c2", name="build")]
    )
    session.tool_result("c1", [ImageBlock(source=data_url("image/jpeg", JPEG), media_type="image/jpeg")])
    session.tool_result("c2", BIG_LOG, tool_name="build")
    session.assistant("A login form, and the build passed.")
    return session


def only_row(store: Any, **options: Any) -> tuple[dict[str, Any], TrajectoryExporter]:
    exporter = TrajectoryExporter(store.open("shots"), options=TrainingOptions(**options), blobs=store.blobs)
    (row,) = exporter.rows("openai", Selection())
    assert problems(row) == []
    return row, exporter


def test_images_become_data_urls_in_user_messages_with_the_stored_bytes(store: Any) -> None:
    screenshot_session(store)
    row, exporter = only_row(store)
    first = row["messages"][0]
    assert first["content"] == [
        {"type": "text", "text": "What is on screen?"},
        {"type": "image_url", "image_url": {"url": data_url("image/png", PNG)}},
    ]
    assert not exporter.dropped


def test_a_tools_images_are_attached_after_its_run_of_tool_messages_as_pi_does(store: Any) -> None:
    screenshot_session(store)
    row, _ = only_row(store)
    roles = [m["role"] for m in row["messages"]]
    assert roles == ["user", "assistant", "tool", "tool", "user", "assistant"]
    screenshot, build, attached = row["messages"][2:5]
    assert (screenshot["tool_call_id"], screenshot["content"]) == ("c1", SEE_ATTACHED)
    assert build["tool_call_id"] == "c2"
    assert attached["content"] == [
        {"type": "text", "text": TOOL_IMAGES_INTRO},
        {"type": "image_url", "image_url": {"url": data_url("image/jpeg", JPEG)}},
    ]


def test_a_large_tool_output_kept_as_a_blob_comes_back_inline_by_default(store: Any) -> None:
    session = screenshot_session(store)
    (block,) = [r for r in session.journal.read() if r.body.__class__.__name__ == "ToolResult"][
        1
    ].body.content
    assert isinstance(block, BlobBlock), "over the inline limit, so the journal holds a reference"
    row, _ = only_row(store)
    assert row["messages"][3]["content"] == BIG_LOG


def test_large_text_by_reference_is_an_option_and_is_counted(store: Any) -> None:
    screenshot_session(store)
    row, exporter = only_row(store, blobs="reference")
    content = row["messages"][3]["content"]
    assert content.startswith("[blob  text/plain; charset=utf-8, ")
    assert "sha256:" in content
    assert len(content) < 200
    assert exporter.dropped == {"blobs (as references)": 1}


def test_placeholder_and_drop_still_keep_images_out_and_say_so(store: Any) -> None:
    screenshot_session(store)
    row, exporter = only_row(store, images="placeholder")
    assert row["messages"][0]["content"] == "What is on screen?\n\n[image: image/png]"
    assert [m["role"] for m in row["messages"]].count("user") == 1, "no attachment message"
    assert exporter.dropped == {"images (as placeholders)": 2}
    _, exporter = only_row(store, images="drop")
    assert exporter.dropped == {"images": 2}


def test_an_image_in_an_assistant_message_is_a_counted_placeholder_openai_takes_none_there() -> None:
    journal = InMemoryJournal("drawn")
    session = Session.create(journal, journal_id="drawn")
    session.user("draw me a cat")
    session.assistant(
        [TextBlock(text="here"), ImageBlock(source=data_url("image/png", PNG), media_type="image/png")]
    )
    exporter = TrajectoryExporter(journal)
    (row,) = exporter.rows("openai", Selection())
    assert problems(row) == []
    assert row["messages"][1]["content"] == "here\n\n[image: image/png]"
    assert exporter.dropped == {"images in assistant messages, which take none (as placeholders)": 1}


def test_sharegpt_rows_have_no_image_form_so_images_are_placeholders(store: Any) -> None:
    screenshot_session(store)
    exporter = TrajectoryExporter(store.open("shots"), blobs=store.blobs)
    (row,) = exporter.rows("sharegpt", Selection())
    assert row["conversations"][0]["value"] == "What is on screen?\n\n[image: image/png]"
    assert exporter.dropped["images (as placeholders)"] == 2


def test_per_turn_samples_and_pairs_carry_the_images_and_stay_valid(store: Any) -> None:
    session = screenshot_session(store)
    exporter = TrajectoryExporter(store.open("shots"), blobs=store.blobs)
    samples = list(exporter.turns(Selection()))
    assert len(samples) == 2
    for sample in samples:
        assert problems(sample) == []
    assert samples[1]["messages"][4]["content"][1]["image_url"]["url"] == data_url("image/jpeg", JPEG)
    first_user = next(iter(session.journal.read(after=1, limit=2))).id
    session.branch_from(first_user, reason="ask again")
    retry = session.assistant("I cannot see anything.")
    # A pair needs an explicit label (issue 33): the retry is the chosen answer, its sibling rejected.
    session.append(Annotation(target=retry.id, type=PREFERENCE, data={"label": "chosen"}))
    (pair,) = TrajectoryExporter(store.open("shots"), blobs=store.blobs).pairs()
    assert pair["prompt"][0]["content"][1]["image_url"]["url"] == data_url("image/png", PNG)
    for side in ("chosen", "rejected"):
        assert problems({"messages": pair["prompt"] + pair[side], "tools": pair["tools"]}) == []


def test_without_a_blob_store_an_export_that_needs_one_stops_with_a_typed_error(store: Any) -> None:
    screenshot_session(store)
    exporter = TrajectoryExporter(store.open("shots"))
    with pytest.raises(NoBlobStoreError, match=r"no blob store was given.*--store URL"):
        list(exporter.rows("openai", Selection()))
    exporter = TrajectoryExporter(
        store.open("shots"), options=TrainingOptions(images="placeholder", blobs="reference")
    )
    (row,) = exporter.rows("openai", Selection())
    assert problems(row) == []


def test_a_collected_blob_stops_the_export_rather_than_vanish_from_it(tmp_path: Path) -> None:
    with open_store(f"file:{tmp_path / 's'}") as store:
        screenshot_session(store)
        shot = next(store.blobs.engine.path(d) for d in store.blobs.digests() if store.blobs.read(d) == PNG)
        shot.unlink()  # lost on disk, as after a bad restore
        with pytest.raises(MissingBlobError):
            list(TrajectoryExporter(store.open("shots"), blobs=store.blobs).rows("openai", Selection()))


def test_a_binary_blob_is_always_a_reference(store: Any) -> None:
    ref = store.blobs.put(b"\x00\x01" * 10, media_type="application/octet-stream")
    session = Session.create(store.create("shots"), blobs=store.blobs)
    session.user([TextBlock(text="here is the core dump"), ref.block("core")])
    session.assistant("thanks")
    row, exporter = only_row(store)
    assert (
        f"[blob core application/octet-stream, 20 bytes, sha256:{ref.digest}]"
        in row["messages"][0]["content"]
    )
    assert exporter.dropped == {"binary blobs (as references)": 1}


def test_the_same_journal_and_blobs_always_export_the_same_bytes(store: Any) -> None:
    screenshot_session(store)

    def export() -> bytes:
        exporter = TrajectoryExporter(store.open("shots"), blobs=store.blobs)
        return b"\n".join(encode_row(r) for r in exporter.rows("openai", Selection("all")))

    assert export() == export()


# --- the command line (in-process: tests.helpers.cli_runner) ------------------------------------------


def test_export_from_a_store_or_from_a_journal_file_inside_it_reads_its_blobs(tmp_path: Path) -> None:
    with open_store(f"file:{tmp_path / 'store'}") as store:
        screenshot_session(store)
    for source in (
        ("shots", "--store", f"file:{tmp_path / 'store'}"),
        (tmp_path / "store" / "journals" / "shots.jsonl",),
    ):
        out = tmp_path / "rows.jsonl"
        run = waybook("export", *source, "--format", "openai", "-o", out, "--force")
        assert run.returncode == 0, run.stderr
        (row,) = [json.loads(line) for line in out.read_text().splitlines()]
        assert problems(row) == []
        assert row["messages"][3]["content"] == BIG_LOG


def test_export_of_a_journal_whose_blobs_cannot_be_read_exits_1_and_writes_nothing(tmp_path: Path) -> None:
    with open_store(f"file:{tmp_path / 'store'}") as store:
        screenshot_session(store)
    loose = tmp_path / "copied.jsonl"  # the journal copied away from its store
    loose.write_bytes((tmp_path / "store" / "journals" / "shots.jsonl").read_bytes())
    out = tmp_path / "rows.jsonl"
    run = waybook("export", loose, "--format", "openai", "-o", out)
    assert run.returncode == 1
    assert "no blob store was given" in run.stderr
    assert "--store URL" in run.stderr
    assert not out.exists()
    run = waybook(
        "export", loose, "--format", "openai", "--images", "placeholder", "--blobs", "reference", "-o", out
    )
    assert run.returncode == 0, run.stderr


# --- Pi's images -----------------------------------------------------------------------------------------


def pi_session_with_images() -> bytes:
    """A version-3 Pi session as Pi writes it: a user pastes a screenshot, the read tool returns an image."""
    entries: list[dict[str, Any]] = [
        {
            "type": "session",
            "version": 3,
            "id": "pi-img",
            "timestamp": "2026-11-30T10:00:00.000Z",
            "cwd": "/w",
        },
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": "2026-11-30T10:00:01.000Z",
            "message": {
                "role": "user",
                "content": [
                    {"type": "text", "text": "what is wrong here?"},
                    {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"},
                ],
                "timestamp": 1796032801000,
            },
        },
        {
            "type": "message",
            "id": "a1",
            "parentId": "u1",
            "timestamp": "2026-11-30T10:00:02.000Z",
            "message": {
                "role": "assistant",
                "content": [{"type": "toolCall", "id": "t1", "name": "read", "arguments": {"path": "b.jpg"}}],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-opus-4-5",
                "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15},
                "stopReason": "toolUse",
                "timestamp": 1796032802000,
            },
        },
        {
            "type": "message",
            "id": "r1",
            "parentId": "a1",
            "timestamp": "2026-11-30T10:00:03.000Z",
            "message": {
                "role": "toolResult",
                "toolCallId": "t1",
                "toolName": "read",
                "content": [
                    {"type": "text", "text": "Read image file [image/jpeg]"},
                    {"type": "image", "data": base64.b64encode(JPEG).decode(), "mimeType": "image/jpeg"},
                    {"type": "image", "data": "bm90IGNhbm9uaWNhbA", "mimeType": "image/png"},
                ],
                "isError": False,
                "timestamp": 1796032803000,
            },
        },
    ]
    return b"".join(json.dumps(e, separators=(",", ":")).encode() + b"\n" for e in entries)


def test_pi_images_are_stored_as_blobs_and_exported_back_byte_for_byte(tmp_path: Path) -> None:
    source = tmp_path / "pi.jsonl"
    source.write_bytes(pi_session_with_images())
    url = f"file:{tmp_path / 'store'}"
    run = waybook("import", "pi", source, "--store", url, "-o", "pi-img")
    assert run.returncode == 0, run.stderr
    journal_file = tmp_path / "store" / "journals" / "pi-img.jsonl"
    stored = journal_file.read_bytes()
    assert base64.b64encode(PNG) not in stored
    assert base64.b64encode(JPEG) not in stored
    assert b"bm90IGNhbm9uaWNhbA" in stored, "base64 that would not come back the same is kept as written"
    with open_store(url) as store:
        assert {store.blobs.read(d) for d in store.blobs.digests()} == {PNG, JPEG}
    out = tmp_path / "back.jsonl"
    run = waybook("export", "pi-img", "--store", url, "--format", "pi", "-o", out)
    assert run.returncode == 0, run.stderr
    assert out.read_bytes() == source.read_bytes()
    run = waybook("export", journal_file, "--format", "pi", "-o", tmp_path / "again.jsonl")
    assert (tmp_path / "again.jsonl").read_bytes() == source.read_bytes(), run.stderr


def test_pi_export_of_image_blobs_without_their_store_is_refused_typed(tmp_path: Path) -> None:
    records, pending = images_as_blobs(import_pi(pi_session_with_images()).records)
    assert len(pending) == 2
    with pytest.raises(NoBlobStoreError, match="no blob store was given"):
        list(images_from_blobs(records, None))


def test_an_import_into_a_plain_file_keeps_images_inline(tmp_path: Path) -> None:
    source = tmp_path / "pi.jsonl"
    source.write_bytes(pi_session_with_images())
    run = waybook("import", "pi", source, "-o", tmp_path / "j.jsonl")
    assert run.returncode == 0, run.stderr
    assert base64.b64encode(PNG) in (tmp_path / "j.jsonl").read_bytes()
    run = waybook("export", tmp_path / "j.jsonl", "--format", "pi", "-o", tmp_path / "back.jsonl")
    assert (tmp_path / "back.jsonl").read_bytes() == source.read_bytes(), run.stderr


def test_a_claude_code_screenshot_imported_into_a_store_is_a_blob_and_exports_as_a_data_url(
    tmp_path: Path,
) -> None:
    from tests.helpers.claude_code import Transcript

    transcript = Transcript()
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(PNG).decode()},
    }
    transcript.user([{"type": "text", "text": "why is this red?"}, image])
    transcript.assistant("m1", {"type": "text", "text": "A failing test."}, stop="end_turn")
    source = tmp_path / "s-1.jsonl"
    source.write_text(transcript.text())
    url = f"file:{tmp_path / 'store'}"
    run = waybook("import", "claude-code", source, "--store", url, "-o", "cc")
    assert run.returncode == 0, run.stderr
    assert base64.b64encode(PNG) not in (tmp_path / "store" / "journals" / "cc.jsonl").read_bytes()
    out = tmp_path / "rows.jsonl"
    run = waybook("export", "cc", "--store", url, "--format", "openai", "-o", out)
    assert run.returncode == 0, run.stderr
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert problems(row) == []
    assert row["messages"][0]["content"][1]["image_url"]["url"] == data_url("image/png", PNG)


def test_per_turn_samples_read_each_blob_from_the_store_once(store: Any) -> None:
    session = screenshot_session(store)
    for n in range(5):
        session.user(f"and now? {n}")
        session.assistant(f"still the login form {n}")

    class Counting:
        def __init__(self, blobs: Any) -> None:
            self.blobs, self.reads = blobs, 0

        def read(self, digest: str) -> bytes:
            self.reads += 1
            data: bytes = self.blobs.read(digest)
            return data

    counting = Counting(store.blobs)
    samples = list(TrajectoryExporter(store.open("shots"), blobs=counting).turns(Selection()))
    assert len(samples) == 7
    assert counting.reads == 2, "the user's image blob and the log blob (the screenshot is inline): once each"


# --- what an upload takes -------------------------------------------------------------------------------


def one_user_turn(content: list[Any]) -> TrajectoryExporter:
    store = open_store("memory:")  # an in-memory store keeps a large image as a blob
    session = Session.create(store.create("turn"), blobs=store.blobs)
    session.user(content)
    session.assistant("seen")
    return TrajectoryExporter(store.open("turn"), blobs=store.blobs)


def png(n: int) -> ImageBlock:
    return ImageBlock(source=data_url("image/png", PNG + bytes([n])), media_type="image/png")


def test_text_and_images_keep_their_order_and_blank_text_is_left_out() -> None:
    exporter = one_user_turn(
        [TextBlock(text="Before:"), png(1), TextBlock(text="  "), TextBlock(text="After:"), png(2)]
    )
    (row,) = exporter.rows("openai", Selection())
    assert problems(row) == []
    assert [part["type"] for part in row["messages"][0]["content"]] == [
        "text",
        "image_url",
        "text",
        "image_url",
    ]
    assert row["messages"][0]["content"][2]["text"] == "After:"


def test_a_row_carries_the_latest_ten_images_and_says_how_many_became_placeholders() -> None:
    exporter = one_user_turn([png(n) for n in range(15)])
    (row,) = exporter.rows("openai", Selection())
    assert problems(row) == []
    parts = row["messages"][0]["content"]
    assert [p["type"] for p in parts] == ["text"] * 5 + ["image_url"] * 10
    assert parts[-1]["image_url"]["url"] == data_url("image/png", PNG + bytes([14]))
    assert exporter.dropped == {"images beyond OpenAI's 10 per row (as placeholders)": 5}


@pytest.mark.parametrize(
    ("image", "why"),
    [
        (
            ImageBlock(source=data_url("image/gif", b"GIF89a"), media_type="image/gif"),
            "in a format OpenAI does not take",
        ),
        (
            ImageBlock(source="data:image/png;base64,not base64!", media_type="image/png"),
            "whose data is not base64",
        ),
        (ImageBlock(source="data:image/png;base64,", media_type="image/png"), "with no bytes to inline"),
        (ImageBlock(source="file:///tmp/shot.png", media_type="image/png"), "with no bytes to inline"),
        (
            ImageBlock(source=data_url("image/png", bytes(10 * 1024 * 1024 + 1)), media_type="image/png"),
            "over OpenAI's 10 MB",
        ),
    ],
)
def test_an_image_an_upload_would_refuse_becomes_a_counted_placeholder(image: ImageBlock, why: str) -> None:
    exporter = one_user_turn([TextBlock(text="look"), image])
    (row,) = exporter.rows("openai", Selection())
    assert problems(row) == []
    assert row["messages"][0]["content"] == f"look\n\n[image: {image.media_type}]"
    assert exporter.dropped == {f"images {why} (as placeholders)": 1}


def test_an_image_type_in_capitals_is_written_as_its_proper_name() -> None:
    (row,) = one_user_turn([ImageBlock(source=data_url("IMAGE/JPG", JPEG), media_type="IMAGE/JPG")]).rows(
        "openai", Selection()
    )
    assert row["messages"][0]["content"][0]["image_url"]["url"] == data_url("image/jpeg", JPEG)
    assert problems(row) == []


@pytest.mark.parametrize(
    ("url", "rule"),
    [
        (data_url("image/gif", b"GIF89a"), "not one OpenAI takes"),
        ("data:image/png;base64,", "has no bytes"),
        ("data:image/png;base64,@@", "not base64"),
        ("ftp://example.com/a.png", "needs an http(s) URL or a data:"),
    ],
)
def test_the_format_checker_refuses_images_an_upload_refuses(url: str, rule: str) -> None:
    row = {
        "messages": [
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]},
            {"role": "assistant", "content": "ok"},
        ]
    }
    assert any(rule in problem for problem in problems(row)), problems(row)


def test_the_format_checker_counts_the_images_of_a_row() -> None:
    image = {"type": "image_url", "image_url": {"url": data_url("image/png", PNG)}}
    row = {"messages": [{"role": "user", "content": [image] * 11}, {"role": "assistant", "content": "ok"}]}
    assert problems(row) == ["a row may hold at most 10 images, not 11"]


def test_redaction_masks_secrets_in_image_urls_on_the_web_too() -> None:
    url = "https://bucket.s3.amazonaws.com/shot.png?X-Amz-Credential=AKIAIOSFODNN7EXAMPLE&sig=1"
    journal = InMemoryJournal("web")
    session = Session.create(journal, journal_id="web")
    session.user([TextBlock(text="see"), ImageBlock(source=url, media_type="image/png")])
    session.assistant("ok")
    (row,) = TrajectoryExporter(journal, redact=True).rows("openai", Selection())
    shown = row["messages"][0]["content"][1]["image_url"]["url"]
    assert "AKIAIOSFODNN7EXAMPLE" not in shown
    assert "[REDACTED:aws-access-key]" in shown


def test_a_training_option_with_an_unknown_value_is_refused_typed() -> None:
    from waybook.export._cleaning import InvalidOptionError

    with pytest.raises(
        InvalidOptionError, match="images must be one of 'inline', 'placeholder', 'drop', not 'Inline'"
    ):
        TrainingOptions(images="Inline")  # type: ignore[arg-type]


# --- Pi sees what the journal keeps as blobs ---------------------------------------------------------------


def test_a_pi_export_shows_a_large_tool_output_kept_as_a_blob_and_loses_nothing(
    store: Any, tmp_path: Path
) -> None:
    screenshot_session(store)
    out = tmp_path / "pi.jsonl"
    run = waybook("export", "shots", "--store", store.url, "--format", "pi", "-o", out)
    assert run.returncode == 0, run.stderr
    entries = [json.loads(line) for line in out.read_text().splitlines()]
    (build,) = [e for e in entries if e.get("message", {}).get("toolCallId") == "c2"]
    assert build["message"]["content"] == [{"type": "text", "text": BIG_LOG}]
    assert build["waybook"]["record"]["body"]["content"][0]["type"] == "blob", "the record itself rides along"
    back = import_pi(out.read_bytes()).records
    (again,) = [r for r in back if r.id == build["id"]]
    assert isinstance(again.body.content[0], BlobBlock)  # type: ignore[union-attr]


def test_a_journal_file_named_from_inside_its_store_finds_the_blobs(tmp_path: Path) -> None:
    with open_store(f"file:{tmp_path / 'store'}") as store:
        screenshot_session(store)
    journals = tmp_path / "store" / "journals"
    run = waybook("export", "shots.jsonl", "--format", "openai", "-o", "-", cwd=journals)
    assert run.returncode == 0, run.stderr
    assert BIG_LOG in json.loads(run.stdout)["messages"][3]["content"]


def test_a_pi_file_exported_from_one_store_imports_whole_into_another_or_into_a_plain_file(
    store: Any, tmp_path: Path
) -> None:
    screenshot_session(store)
    exported = tmp_path / "shots.pi.jsonl"
    assert waybook("export", "shots", "--store", store.url, "--format", "pi", "-o", exported).returncode == 0
    other = f"file:{tmp_path / 'other'}"
    run = waybook("import", "pi", exported, "--store", other, "-o", "shots")
    assert run.returncode == 0, run.stderr
    assert "blob reference" not in run.stderr
    verified = waybook("verify", "--store", other, "shots", "--blobs")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "0 missing" in verified.stdout
    with open_store(other) as again:
        (row,) = TrajectoryExporter(again.open("shots"), blobs=again.blobs).rows("openai", Selection())
    assert row["messages"][3]["content"] == BIG_LOG
    plain = tmp_path / "plain.jsonl"
    run = waybook("import", "pi", exported, "-o", plain)
    assert run.returncode == 0, run.stderr
    (row,) = TrajectoryExporter(JsonlJournal(plain, readonly=True)).rows("openai", Selection())
    assert row["messages"][3]["content"] == BIG_LOG, "a plain file has no blobs: the text is inline"


def test_an_import_says_so_when_a_blob_it_references_is_nowhere(store: Any, tmp_path: Path) -> None:
    ref = store.blobs.put(b"\x00core", media_type="application/octet-stream")
    session = Session.create(store.create("dump"), blobs=store.blobs)
    session.user([TextBlock(text="the core dump"), ref.block("core")])
    session.assistant("thanks")
    exported = tmp_path / "dump.pi.jsonl"
    assert waybook("export", "dump", "--store", store.url, "--format", "pi", "-o", exported).returncode == 0
    run = waybook("import", "pi", exported, "-o", tmp_path / "plain.jsonl")
    assert run.returncode == 0, run.stderr
    assert "1 blob reference whose bytes are not in the source" in run.stderr


def test_a_store_import_leaves_only_leases_on_the_blobs_it_committed_and_a_collection_keeps_them(
    tmp_path: Path,
) -> None:
    """Issue 27: a lease on a referenced blob is never dropped early (it runs out), so no collection in
    the window between commit and the collector's next look can delete a blob a record references."""
    source = tmp_path / "pi.jsonl"
    source.write_bytes(pi_session_with_images())
    assert waybook("import", "pi", source, "--store", f"file:{tmp_path / 'store'}", "-o", "p").returncode == 0
    leased = {path.name.split(".")[0] for path in (tmp_path / "store" / "blobs" / "leases").iterdir()}
    with open_store(f"file:{tmp_path / 'store'}") as store:
        assert leased <= set(store.blobs.digests())
        store.blobs.collect(grace=0)
        assert {store.blobs.read(d) for d in store.blobs.digests()} == {PNG, JPEG}


def test_pi_images_round_trip_through_a_postgresql_store(tmp_path: Path) -> None:
    from tests.helpers.pg_fixtures import pg_store_url

    url = pg_store_url()
    source = tmp_path / "pi.jsonl"
    source.write_bytes(pi_session_with_images())
    run = waybook("import", "pi", source, "--store", url, "-o", "pi-img")
    assert run.returncode == 0, run.stderr
    with open_store(url) as store:
        lines = b"".join(store.open("pi-img").read_lines())
        assert base64.b64encode(PNG) not in lines
        assert {store.blobs.read(d) for d in store.blobs.digests()} == {PNG, JPEG}
    out = tmp_path / "back.jsonl"
    run = waybook("export", "pi-img", "--store", url, "--format", "pi", "-o", out)
    assert run.returncode == 0, run.stderr
    assert out.read_bytes() == source.read_bytes()
    rows = tmp_path / "rows.jsonl"
    assert waybook("export", "pi-img", "--store", url, "--format", "openai", "-o", rows).returncode == 0
    (row,) = [json.loads(line) for line in rows.read_text().splitlines()]
    assert problems(row) == []


def test_an_export_never_replaces_its_own_store_however_the_url_is_spelled(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with open_store(f"sqlite:{db}") as store:
        Session.create(store.create("j")).user("hello")
    before = db.read_bytes()
    for url in (f"sqlite:{db}", f"sqlite:{db}?busy_timeout=5", f"sqlite://localhost{db}"):
        run = waybook("export", "j", "--store", url, "--format", "archival", "-o", db, "--force")
        assert run.returncode == 2, (url, run.stderr)
    assert db.read_bytes() == before


def test_a_store_import_says_so_only_when_a_referenced_blob_is_not_in_the_store(
    store: Any, tmp_path: Path
) -> None:
    ref = store.blobs.put(b"\x00core", media_type="application/octet-stream")
    session = Session.create(store.create("dump"), blobs=store.blobs)
    session.user([TextBlock(text="the core dump"), ref.block("core")])
    session.assistant("thanks")
    exported = tmp_path / "dump.pi.jsonl"
    assert waybook("export", "dump", "--store", store.url, "--format", "pi", "-o", exported).returncode == 0
    empty = waybook("import", "pi", exported, "--store", f"file:{tmp_path / 'empty'}", "-o", "dump")
    assert empty.returncode == 0, empty.stderr
    assert "1 blob reference whose bytes are not in the source" in empty.stderr
    holding = waybook("import", "pi", exported, "--store", store.url, "-o", "dump")  # it holds it all
    assert holding.returncode == 0, holding.stderr
    assert "blob reference" not in holding.stderr
