"""`WaybookSaver(store, redact=True)` (issue 46): channel values, pending writes, metadata and session
nodes are masked before the saver serializes or stores them, so no secret reaches the store's bytes (nor
the base64 values inside them), and the saver still round-trips: a graph resumes from its masked state,
and LangGraph's own conformance suite passes with masking on."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import pathlib
from collections import OrderedDict, defaultdict, deque
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import numpy
import pydantic
import pydantic.v1
import pytest

pytest.importorskip("langgraph")

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.store.base import Item
from langgraph.types import Interrupt, Send

from tests.helpers.redaction import DB, STORE_URLS, TOKEN, decoded_values, raw_bytes
from waybook.integrations.langgraph import UnmaskedSecretError, WaybookSaver
from waybook.journal import verify
from waybook.model import CustomEntry, InvalidArgumentError, UserMessage
from waybook.stores import open_store


def graph(checkpointer: Any) -> Any:
    def model(state: MessagesState) -> dict[str, Any]:
        last = state["messages"][-1].content
        call = {"name": "bash", "args": {"cmd": f"psql {DB.text}"}, "id": "c1", "type": "tool_call"}
        return {"messages": [AIMessage(f"echo: {last}", tool_calls=[call])]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_edge(START, "model")
    return builder.compile(checkpointer=checkpointer)


CFG = {"configurable": {"thread_id": "t"}}


def converse(checkpointer: Any) -> Any:
    chat = graph(checkpointer)
    chat.invoke({"messages": [HumanMessage(f"deploy with {TOKEN.text}")]}, CFG)
    chat.invoke({"messages": [HumanMessage("again")]}, CFG)
    return chat


def stored(tmp_path: Path, url: str) -> bytes:
    """The store's raw bytes and every serialized value in its records, decoded."""
    data = raw_bytes(tmp_path)
    with open_store(url) as store:
        for info in store.list(limit=100):
            with store.open(info.journal_id) as journal:
                assert verify(journal).ok
                for record in journal.read():
                    data += decoded_values(getattr(record.body, "data", None))
    return data


@pytest.mark.parametrize("scheme", sorted(STORE_URLS))
def test_no_secret_reaches_the_store_nor_its_serialized_values(tmp_path: Path, scheme: str) -> None:
    with open_store(STORE_URLS[scheme](tmp_path)) as store:
        converse(WaybookSaver(store, redact=True))
    data = stored(tmp_path, STORE_URLS[scheme](tmp_path))
    assert TOKEN.core.encode() not in data
    assert DB.core.encode() not in data
    assert b"[REDACTED:github-token]" in data


@pytest.mark.parametrize("scheme", sorted(STORE_URLS))
def test_without_redact_the_secret_is_stored(tmp_path: Path, scheme: str) -> None:
    with open_store(STORE_URLS[scheme](tmp_path)) as store:
        converse(WaybookSaver(store))
    assert TOKEN.core.encode() in stored(tmp_path, STORE_URLS[scheme](tmp_path))  # the test above can fail


def test_the_session_nodes_say_what_was_masked_where(tmp_path: Path) -> None:
    with open_store(f"file:{tmp_path / 'store'}") as store:
        saver = WaybookSaver(store, redact=True)
        converse(saver)
        with store.open(saver.journal_id("t")) as journal:
            records = list(journal.read())
    user = next(r.body for r in records if isinstance(r.body, UserMessage))
    assert user.details is not None
    assert user.details["waybook.redacted"] == [
        {"field": "content", "block": 0, "kind": "github-token", "count": 1}
    ]
    assert any(isinstance(r.body, CustomEntry) for r in records)


def test_a_graph_resumes_from_its_masked_state_as_from_langgraphs_saver(tmp_path: Path) -> None:
    url = f"sqlite:{tmp_path / 'store.db'}"
    with open_store(url) as store:
        converse(WaybookSaver(store, redact=True))
    reference = converse(InMemorySaver())
    with open_store(url) as store:
        restarted = graph(WaybookSaver(store, redact=True))
        ours, theirs = restarted.get_state(CFG), reference.get_state(CFG)
        contents = [m.content for m in ours.values["messages"]]
        assert contents == [
            c.replace(TOKEN.text, "[REDACTED:github-token]")
            for c in (m.content for m in theirs.values["messages"])
        ]
        command = ours.values["messages"][1].tool_calls[0]["args"]["cmd"]
        assert DB.core not in command
        assert "[REDACTED:url-password]" in command
        assert len(list(restarted.get_state_history(CFG))) == len(list(reference.get_state_history(CFG)))
        restarted.invoke({"messages": [HumanMessage("third")]}, CFG)
        assert [m.content for m in restarted.get_state(CFG).values["messages"]][-2:] == [
            "third",
            "echo: third",
        ]


def test_a_redact_option_that_is_not_one_is_refused() -> None:
    with open_store("memory:") as store, pytest.raises(InvalidArgumentError, match="WaybookSaver's redact"):
        WaybookSaver(store, redact="yes")  # type: ignore[arg-type]


def test_langgraphs_conformance_suite_passes_with_masking_on(tmp_path: Path) -> None:
    pytest.importorskip("langgraph.checkpoint.conformance")
    from langgraph.checkpoint.conformance import checkpointer_test, validate

    @checkpointer_test(name="WaybookSaver(redact=True)")
    async def masking_saver() -> AsyncIterator[WaybookSaver]:
        with WaybookSaver(open_store(f"sqlite:{tmp_path / 'store.db'}"), redact=True) as saver:
            yield saver

    report = asyncio.run(validate(masking_saver))
    failures = {name: result.failures for name, result in report.results.items() if result.passed is not True}
    assert not failures, failures


# --- every family LangGraph's serializer stores a string of (issue 46: they were stored in clear) -------


@dataclasses.dataclass(frozen=True)
class Ticket:
    """A frozen state dataclass with a field the constructor does not take."""

    note: str
    tags: tuple[str, ...] = ()
    echo: str = dataclasses.field(init=False, default="")

    def __post_init__(self) -> None:
        object.__setattr__(self, "echo", f"copied: {self.note}")


class Pair(NamedTuple):
    key: str
    value: str


class Notes(list):  # type: ignore[type-arg]
    """A list subclass (stored as a plain list)."""


class Loose(pydantic.BaseModel, extra="allow"):
    """A pydantic v2 model with an extra field."""

    title: str


class OldModel(pydantic.v1.BaseModel):
    """A pydantic v1 model."""

    title: str
    body: str


class Vault(enum.Enum):
    """An Enum member cannot be rebuilt with a masked value: a secret in one is refused."""

    KEY = TOKEN.text


class Padded(enum.Enum):
    """A token that starts a 50-character string."""

    KEY = TOKEN.text + "x" * 10


SECRET = f"deploy with {TOKEN.text}"
FAMILIES: dict[str, Callable[[], Any]] = {
    "dataclass (frozen, init=False field)": lambda: Ticket(SECRET, tags=(TOKEN.text,)),
    "LangGraph Send": lambda: Send("worker", {"cmd": SECRET}),
    "LangGraph Interrupt": lambda: Interrupt(value={"ask": SECRET}, id="i1"),
    "namedtuple": lambda: Pair("token", SECRET),
    "LangGraph _DeltaSnapshot": lambda: _DeltaSnapshot([SECRET]),
    "set": lambda: {SECRET, "plain"},
    "frozenset": lambda: frozenset({SECRET}),
    "deque": lambda: deque([SECRET, "plain"], maxlen=5),
    "OrderedDict": lambda: OrderedDict([("first", SECRET), (DB.text, "as a key")]),
    "defaultdict": lambda: defaultdict(list, {"cmds": [SECRET]}),
    "list subclass": lambda: Notes([SECRET]),
    "pydantic v2 extra field": lambda: Loose(title="t", extra_note=SECRET),  # type: ignore[call-arg]
    "pydantic v1 model": lambda: OldModel(title="t", body=SECRET),
    "pydantic SecretStr": lambda: pydantic.SecretStr(SECRET),
    "path": lambda: pathlib.Path("/tmp") / TOKEN.text / "log",
    "exception": lambda: RuntimeError(SECRET),
    "numpy str array (2-D, Fortran order)": lambda: numpy.asfortranarray([[SECRET, "x"], ["y", "z"]]),
    "LangGraph store Item": lambda: Item(
        value={"memo": SECRET}, key="k", namespace=("users", "u1"), created_at=NOW, updated_at=NOW
    ),
}
NOW = datetime(2026, 1, 1, tzinfo=UTC)
USER_TYPES = [Ticket, Pair, Notes, Loose, OldModel, Vault, pydantic.SecretStr, Item, RuntimeError]
THREAD = {"configurable": {"thread_id": "families", "checkpoint_ns": ""}}


def serde() -> JsonPlusSerializer:
    """LangGraph's serializer, allowed to rebuild this module's types (the saver's default is strict)."""
    return JsonPlusSerializer(allowed_msgpack_modules=USER_TYPES)


def put_value(saver: WaybookSaver, where: str, value: Any) -> Any:
    """Store `value` as a channel value, a pending write or in the metadata; the stored value read back."""
    config = saver.put(THREAD, empty_checkpoint(), {"source": "loop", "step": 0}, {})
    return put_again(saver, config, where, value)


def put_again(saver: WaybookSaver, config: Any, where: str, value: Any) -> Any:
    """`put_value` on a thread that has a checkpoint (`config`)."""
    if where == "pending write":
        saver.put_writes(config, [("state", value)], "task-1")
    else:
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"state": value} if where == "channel value" else {}
        checkpoint["channel_versions"] = {"state": saver.get_next_version(None, None)}
        metadata: Any = {"source": "loop", "step": 1, **({"note": value} if where == "metadata" else {})}
        config = saver.put(config, checkpoint, metadata, checkpoint["channel_versions"])
    found = saver.get_tuple(config)
    assert found is not None
    if where == "channel value":
        return found.checkpoint["channel_values"]["state"]
    if where == "metadata":
        return found.metadata["note"]
    [(_, _, written)] = found.pending_writes or []
    return written


def holds(data: bytes, text: str) -> bool:
    """Whether `data` holds `text` as UTF-8, or as the fixed-width UTF-32 of a numpy str array."""
    return text.encode() in data or text.encode("utf-32-le") in data


PLACES = ["channel value", "pending write", "metadata"]
NAMED = {
    "channel value": "channel 'state'",
    "pending write": "a pending write to channel 'state' (task task-1)",
    "metadata": "the checkpoint's metadata",
}
"""How a refusal names each place."""


@pytest.mark.parametrize("where", PLACES)
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_secret_in_every_family_the_serializer_stores_is_masked_and_reads_back_as_its_type(
    tmp_path: Path, family: str, where: str
) -> None:
    value = FAMILIES[family]()
    url = STORE_URLS["directory"](tmp_path)
    with open_store(url) as store, WaybookSaver(store, serde=serde(), redact=True) as saver:
        read = put_value(saver, where, value)
    data = stored(tmp_path, url)
    assert not holds(data, TOKEN.core)
    assert holds(
        data, "[REDACTED:secret-type]" if family == "pydantic SecretStr" else "[REDACTED:github-token]"
    )
    as_serialized = serde().loads_typed(serde().dumps_typed(value))
    assert type(read) is type(as_serialized)  # masked, it round-trips as the original would


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_without_redact_every_family_stores_the_secret(tmp_path: Path, family: str) -> None:
    url = STORE_URLS["directory"](tmp_path)
    with open_store(url) as store, WaybookSaver(store, serde=serde()) as saver:
        put_value(saver, "channel value", FAMILIES[family]())
    assert holds(stored(tmp_path, url), TOKEN.core)  # the masking test above can fail


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_value_with_nothing_to_mask_is_the_very_object(family: str) -> None:
    clean = FAMILIES[family]()
    with open_store("memory:") as store, WaybookSaver(store, redact=True) as saver:
        masked = saver._masked(clean)
        assert masked is not clean  # it held the secret
        assert saver._masked(masked) is masked  # masked, nothing is left to mask: the same object


@pytest.mark.parametrize(
    "secret",
    [pydantic.SecretStr("hunter2"), pydantic.SecretBytes(b"hunter2"), pydantic.v1.SecretStr("hunter2")],
    ids=["SecretStr", "SecretBytes", "v1 SecretStr"],
)
def test_a_pydantic_secret_type_is_masked_whole_though_the_detector_sees_no_secret_in_it(
    tmp_path: Path, secret: Any
) -> None:
    url = STORE_URLS["directory"](tmp_path)
    allowed = [*USER_TYPES, pydantic.SecretBytes, pydantic.v1.SecretStr]
    with (
        open_store(url) as store,
        WaybookSaver(store, serde=JsonPlusSerializer(allowed_msgpack_modules=allowed), redact=True) as saver,
    ):
        read = put_value(saver, "channel value", {"password": secret})
        masked = saver._masked(secret)
        assert saver._masked(masked) is masked  # masked once, nothing is left to mask
    assert b"hunter2" not in stored(tmp_path, url)
    assert type(read["password"]) is type(secret)
    shown = read["password"].get_secret_value()
    assert shown in ("[REDACTED:secret-type]", b"[REDACTED:secret-type]")


def test_a_masked_dataclass_keeps_its_type_its_frozen_fields_and_its_init_false_field() -> None:
    with open_store("memory:") as store, WaybookSaver(store, redact=True) as saver:
        masked = saver._masked(Ticket(SECRET, tags=(TOKEN.text, "kept")))
    assert type(masked) is Ticket
    assert masked.note == "deploy with [REDACTED:github-token]"
    assert masked.tags == ("[REDACTED:github-token]", "kept")
    assert masked.echo == "copied: deploy with [REDACTED:github-token]"
    with pytest.raises(dataclasses.FrozenInstanceError):
        masked.note = "changed"  # type: ignore[misc]


def test_a_masked_defaultdict_keeps_its_factory_and_a_deque_its_maxlen() -> None:
    with open_store("memory:") as store, WaybookSaver(store, redact=True) as saver:
        table = saver._masked(defaultdict(list, {"cmds": [SECRET]}))
        queue = saver._masked(deque([SECRET], maxlen=5))
    assert type(table) is defaultdict
    assert table.default_factory is list
    assert table["cmds"] == ["deploy with [REDACTED:github-token]"]
    assert type(queue) is deque
    assert queue.maxlen == 5


# --- what the walk cannot mask is refused before any byte is written ---------------------------------

UNMASKABLE: dict[str, tuple[Callable[[], Any], str]] = {
    "Enum member": (lambda: {"vault": Vault.KEY}, f"{__name__}.Vault"),
    "bytes": (lambda: [SECRET.encode()], ""),  # held by the stored value itself: a list, or the metadata
    # a token that starts a 48-57 byte string: its msgpack length prefix is a digit, which a scan of the
    # raw bytes takes for the token's left neighbour (and so misses the token)
    "Enum member, token after a digit length prefix": (
        lambda: Padded.KEY,
        f"{__name__}.Padded",
    ),
}


@pytest.mark.parametrize("where", PLACES)
@pytest.mark.parametrize("case", sorted(UNMASKABLE))
def test_a_secret_the_walk_cannot_mask_is_refused_and_nothing_is_written(
    tmp_path: Path, case: str, where: str
) -> None:
    make, holder = UNMASKABLE[case]
    url = STORE_URLS["directory"](tmp_path)
    with open_store(url) as store, WaybookSaver(store, redact=True) as saver:
        config = saver.put(THREAD, empty_checkpoint(), {"source": "loop", "step": 0}, {})
        with store.open(saver.journal_id("families")) as journal:
            before = journal.head()
        with pytest.raises(UnmaskedSecretError) as refused:
            put_again(saver, config, where, make())
        with store.open(saver.journal_id("families")) as journal:
            assert journal.head() == before
    assert TOKEN.core.encode() not in stored(tmp_path, url)
    message = str(refused.value)
    assert "thread 'families'" in message
    assert "github-token" in message
    assert holder in message
    assert "nothing was written" in message
    assert "mask the secret before it reaches the graph" in message
    assert refused.value.where == NAMED[where]


@pytest.mark.parametrize("byte_order", ["<", ">"])
def test_a_secret_in_a_numpy_str_array_is_found_in_its_utf32_buffer(byte_order: str) -> None:
    """The check's own reach: a str array stores each string as fixed-width UTF-32 (four bytes a
    character), so its token is in no byte string; the check decodes the buffer, either byte order."""
    from waybook._masking import SecretMask
    from waybook.integrations.langgraph._secrets import leaked

    array = numpy.array([["plain", SECRET]], dtype=f"{byte_order}U60")
    kind, data = serde().dumps_typed(array)
    assert TOKEN.core.encode() not in data  # no scan of the raw bytes finds it
    found = leaked(SecretMask(), kind, data, array)
    assert found is not None
    assert found.kinds == ("github-token",)
    clean = numpy.array(["plain"], dtype=f"{byte_order}U5")
    assert leaked(SecretMask(), *serde().dumps_typed(clean), clean) is None


def test_a_masked_numpy_str_array_keeps_its_shape_order_and_other_strings() -> None:
    array = numpy.asfortranarray(numpy.array([[SECRET, "kept"], ["also kept", TOKEN.text]]))
    with open_store("memory:") as store, WaybookSaver(store, redact=True) as saver:
        masked = saver._masked(array)
    assert masked.shape == (2, 2)
    assert masked.flags.f_contiguous
    assert masked[0, 1] == "kept"
    assert masked[1, 0] == "also kept"
    assert masked[0, 0] == "deploy with [REDACTED:github-token]"
    assert masked[1, 1] == "[REDACTED:github-token]"


def first_write(saver: WaybookSaver, where: str, value: Any) -> None:
    """`value` in the first write to the thread: its first checkpoint, or a pending write before one."""
    if where == "pending write":
        saver.put_writes(
            {"configurable": {**THREAD["configurable"], "checkpoint_id": "c-1"}}, [("state", value)], "task-1"
        )
        return
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"state": value} if where == "channel value" else {}
    checkpoint["channel_versions"] = {"state": saver.get_next_version(None, None)}
    metadata: Any = {"source": "loop", "step": 0, **({"note": value} if where == "metadata" else {})}
    saver.put(THREAD, checkpoint, metadata, checkpoint["channel_versions"])


@pytest.mark.parametrize("where", PLACES)
def test_a_refused_first_write_of_a_thread_leaves_no_journal(tmp_path: Path, where: str) -> None:
    url = STORE_URLS["directory"](tmp_path)
    with open_store(url) as store, WaybookSaver(store, redact=True) as saver:
        with pytest.raises(UnmaskedSecretError) as refused:
            first_write(saver, where, Vault.KEY)
        assert not store.exists(saver.journal_id("families"))
        assert [info.journal_id for info in store.list()] == []
    assert refused.value.where == NAMED[where]
    assert TOKEN.core.encode() not in stored(tmp_path, url)


class XorCipher:
    """A stand-in cipher for LangGraph's EncryptedSerializer (its AES needs pycryptodome)."""

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        return "xor", bytes(b ^ 0x5A for b in plaintext)

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        return bytes(b ^ 0x5A for b in ciphertext)


def test_with_an_encrypting_serde_the_check_reads_the_bytes_before_encryption(tmp_path: Path) -> None:
    encrypting = EncryptedSerializer(XorCipher(), JsonPlusSerializer())
    with open_store(STORE_URLS["directory"](tmp_path)) as store:
        saver = WaybookSaver(store, serde=encrypting, redact=True)
        with pytest.raises(UnmaskedSecretError, match="channel 'state'"):
            put_value(saver, "channel value", {"vault": Vault.KEY})
        assert put_value(saver, "channel value", Pair("token", SECRET)).value == (
            "deploy with [REDACTED:github-token]"
        )
