"""The Pi coding agent's session JSONL, imported to and exported from waybook records, losing nothing.

Pi writes a header line (`type: "session"`) and then entries. Version 1 entries have no ids: each one
continues the one before, and a compaction names its first kept entry by index. Version 2 gives every
entry an `id` and a `parentId`; version 3 renames the `hookMessage` role to `custom`. Import migrates to
version-3 meaning first (as Pi's own session manager does), then maps each entry to a record:

| Pi entry | waybook record |
|---|---|
| `message` user, assistant, toolResult | the same messages |
| `message` bashExecution | CustomEntry `pi.message.bashExecution`; in context unless `excludeFromContext` |
| `message` custom, `custom_message` | CustomEntry `pi.message.custom` / `pi.custom_message`, in context |
| `compaction` | Compaction |
| `branch_summary` | CustomEntry `pi.branch_summary`, in context when its summary is not empty |
| `model_change`, `thinking_level_change`, `custom`, `label`, ... | CustomEntry `pi.<type>` (not in context) |

What the model sees follows Pi's own rules (its `convertToLlm` and `buildSessionContext`): a bash
execution run with `!!` is never sent; a custom message is always sent (`display` only decides whether
Pi's terminal shows it); `custom` entries never are.

Lossless both ways. Import derives the Pi entry back from each record and keeps the difference (fields
waybook has no place for, unknown block fields such as `partialJson` or `thoughtSignature`, a content
string, a timestamp in another spelling) as a patch in the record (`details["pi"]` of messages and
compactions, `metadata["pi"]` of the header; a `pi.*` custom entry keeps the entry's fields in `data`).
Export applies it, so Pi -> waybook -> Pi gives every entry back (Pi's migration of old versions
included). Export carries what Pi has no form for in a top-level `waybook` field of an entry, which Pi
keeps and ignores: leaf moves and resets before a node (`before`), and the exact record wherever the
Pi form would not re-import to it (`record`); trailing ones ride on a `custom` entry of customType
`waybook.records`. So waybook -> Pi -> waybook gives every record back, ids, times and reasons included.

Ids are deterministic (Pi's own ids; `l<line>` for version-1 entries; `move:<entry id>` for inferred
moves; a derived id never collides with one in the file), so importing the same file twice gives the
same records. Ids and parents follow Pi's loader (see `_tree`): the later of two entries with one id
keeps it, a parentId naming the entry itself or no entry makes a root, and the leaf ends at the file's
last entry. A line holding two JSON objects (a known artefact of concurrent writers) is no entry for Pi,
whose loader skips a line `JSON.parse` refuses: it is kept verbatim as a `pi.joined_line` entry after the
session, out of the context, and reported in `PiImport.joined`; version-1 indexes do not count it. A
compaction whose first kept entry is not an entry before it (its own, as a version-1 index counting
itself gives) keeps nothing, as in Pi's context. Each record is checked against the session rules as it is
made: a problem names its source line, and `lenient` skips the entry instead.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Container, Iterable, Iterator
from typing import Any

import attrs
import msgspec

from waybook.codecs import base64_payload, canonical_json, decode_body, is_salt
from waybook.formats import _js_json as js_json
from waybook.formats import _json_patch as json_patch
from waybook.formats.pi import _form as pi_form
from waybook.formats.pi import _lines as pi_lines
from waybook.formats.pi import _map as pi_map
from waybook.formats.pi import _tree as pi_tree
from waybook.formats.pi._form import (
    BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX,
    CARRIER,
    PATCH,
    PI_VERSION,
    TRAILER,
    WRAPPED,
)
from waybook.formats.pi._map import bash_text
from waybook.journal import SessionRules
from waybook.model import (
    AssistantMessage,
    BatchPlace,
    BlobBlock,
    Compaction,
    CustomEntry,
    DecodeError,
    Header,
    ImageBlock,
    JournalError,
    LeafMoved,
    NewRecord,
    Record,
    Reset,
    TextBlock,
    ToolResult,
    UserMessage,
)

__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "PI_VERSION",
    "TRAILER",
    "WRAPPED",
    "PiFormatError",
    "PiImport",
    "bash_text",
    "export_pi",
    "import_pi",
]


LONE_SURROGATE = pi_lines.LONE_SURROGATE
JOINED = "pi.joined_line"
"""The custom entry keeping a line that held two entries joined (Pi's loader skips it): its number, text."""
JOINED_NOTE = (
    "the line holds two entries joined by concurrent writers; Pi's loader skips it (JSON.parse fails), "
    "so they are not in the session: kept verbatim as a pi.joined_line entry after it, out of the context"
)
INFERRED_MOVE = "pi: continues an earlier entry"
"""The reason of the leaf move import infers when an entry's parentId is not the entry before it."""


class PiFormatError(DecodeError):
    """A Pi session file that cannot be imported; `problems` lists (line number, reason)."""

    def __init__(self, problems: list[tuple[int, str]]) -> None:
        self.problems = problems
        shown = "; ".join(f"line {n}: {why}" for n, why in problems[:5])
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        super().__init__(
            f"{len(problems)} line(s) cannot be imported: {shown}{more}. Fix them, or import with "
            "--lenient to skip them (each is reported)",
            where="pi session",
        )


@attrs.frozen
class PiImport:
    """The records of an imported Pi session, the version it was written in, the lines skipped, and
    the lines that held more than one entry (all imported)."""

    records: tuple[NewRecord, ...]
    version: int
    skipped: tuple[tuple[int, str], ...]
    joined: tuple[int, ...] = ()
    inferred: tuple[tuple[int, str], ...] = ()
    """What import decided where the file left it open, following Pi's loader: a derived id, a parentId
    that names the entry itself or no entry (a root), a parent on a later line, the leaf at the end."""
    blobs: dict[str, tuple[bytes, str]] = attrs.field(factory=dict)
    """Bytes the file shows for blobs its carried records reference (a waybook export shows a text blob
    as its text): digest -> (bytes, media type). A store import stores them before the journal; a plain
    file import inlines them (waybook._offload.inline_known)."""
    places: tuple[BatchPlace | None, ...] = ()
    """Each record's place in the batch to append it in, `(index, size)`, or None to append it alone:
    the places a waybook export carried (a record's place is inside the bytes its digest covers, so
    appending in these batches gives every record its digest back); None for the entries Pi wrote."""

    def batches(self) -> list[tuple[NewRecord, ...]]:
        """The records in the batches to append them in (`places`): a waybook export's batches come
        back as they were; every entry Pi wrote is appended alone."""
        records, places = self.records, self.places or (None,) * len(self.records)
        batches: list[tuple[NewRecord, ...]] = []
        at = 0
        while at < len(records):
            place = places[at]
            width = 1 if place is None else place[1]
            batches.append(records[at : at + width])
            at += width
        return batches


# --- import ---------------------------------------------------------------------------------------


def import_pi(data: bytes | str, *, lenient: bool = False, name: str | None = None) -> PiImport:
    """Parse, migrate and map a Pi session file's content to records (a new journal's first records).

    Every record is checked against the session rules as it is made, so what import returns appends;
    a problem names its source line, and with `lenient` a per-entry problem skips that entry. `name`
    names the journal in its header instead of the Pi session's id (an import into a store under an id
    of the caller's: a store's journal names its own id); the session's id is kept in the header's Pi
    patch, so an export gives it back. A header a waybook export carried whole is kept as it was.
    """
    entries, skipped, joined = pi_lines.parse(data)
    if skipped and not lenient:
        raise PiFormatError(skipped)
    if not entries or entries[0][1].get("type") != "session":
        raise PiFormatError([(entries[0][0] if entries else 1, "the first line is not a Pi session header")])
    header_line, header = entries[0]
    version = header.get("version", 1)
    if type(version) is not int or not 1 <= version <= PI_VERSION:
        raise PiFormatError([(header_line, f"unknown Pi session version {version!r}")])
    problems: list[tuple[int, str]] = []
    records: list[NewRecord] = []
    places: list[BatchPlace | None] = []
    rules = SessionRules()
    try:
        header_records = _header_records(header, name)
        rules.commit(rules.check(header_records))
        records.extend(header_records)
        places.append(_place(_carrier(header).get("batch")))
    except (KeyError, TypeError, ValueError, OverflowError, OSError, DecodeError, JournalError) as exc:
        problems.append((header_line, _why(exc)))
    reserved = {records[0].id} if records else set()
    placement = pi_tree.place(_migrate(entries[1:], version, reserved), reserved=reserved)
    taken = set(placement.taken)
    leaf: str | None = None
    known: dict[str, tuple[bytes, str]] = {}
    gone: dict[str, str | None] = {}  # a skipped entry's record id -> the parent its children get
    notes = list(placement.notes)
    for placed in placement.entries:
        parent = placed.parent
        while parent in gone:
            parent = gone[parent]
        try:
            note = _keeps_nothing(placed.entry, rules)
            new, new_places, after = _entry_records(placed, parent, leaf, known, taken, nodes=rules.ids)
            if new:
                rules.commit(rules.check(new))
        except (
            KeyError,
            TypeError,
            ValueError,
            AttributeError,
            OverflowError,
            OSError,
            DecodeError,
            JournalError,
        ) as exc:
            if not lenient:
                problems.append((placed.line, _why(exc)))
            else:
                skipped.append((placed.line, _why(exc)))
                if placed.record_id is not None:
                    gone[placed.record_id] = parent
            continue
        records.extend(new)
        places.extend(new_places)
        leaf = after
        if note:
            notes.append((placed.line, note))
    if problems:
        raise PiFormatError(problems)
    last = placement.last
    while last in gone:
        last = gone[last]
    tail: list[NewRecord] = []
    if placement.last is not None and last != leaf and records:
        move = LeafMoved(from_leaf=leaf, to_leaf=last, reason=pi_tree.RESUME, actor="pi")
        tail.append(NewRecord(id=pi_tree.fresh("move:resume", taken), at=records[-1].at, body=move))
        notes.append(
            (placement.entries[-1].line, "Pi resumes at the file's last entry; the leaf moves there")
        )
        leaf = last
    for number, text in joined:
        entry = CustomEntry(parent=leaf, type=JOINED, data={"line": number, "text": text})
        tail.append(NewRecord(id=pi_tree.fresh(f"joined-l{number}", taken), at=records[-1].at, body=entry))
        leaf = tail[-1].id
        notes.append((number, JOINED_NOTE))
    if tail:
        rules.commit(rules.check(tail))  # a move to a placed node and entries after it: always valid
        records.extend(tail)
        places.extend([None] * len(tail))
    if not whole_batches(places):
        notes.append((header_line, NO_PLACES))
        places = [None] * len(places)
    return PiImport(
        records=tuple(records),
        version=version,
        skipped=tuple(skipped),
        joined=tuple(number for number, _ in joined),
        inferred=tuple(notes),
        blobs=known,
        places=tuple(places),
    )


def _keeps_nothing(entry: dict[str, Any], rules: SessionRules) -> str:
    """Why a compaction keeps nothing before its summary, when its first kept entry is not an entry
    before it (its own id, as a version-1 `firstKeptEntryIndex` counting itself gives): Pi's
    `buildSessionContext` never meets that id before the compaction, so it keeps nothing. "" otherwise."""
    kept = entry.get("firstKeptEntryId")
    if entry.get("type") != "compaction" or not isinstance(kept, str) or kept in rules.ids:
        return ""
    return (
        f"the compaction keeps entry {kept!r}, which is no entry before it; as Pi reads it, it keeps nothing"
    )


NO_PLACES = (
    "the batch places the waybook export carried do not fit the entries (the file was edited); every "
    "record is appended alone, so the digests of the records that were in batches differ from the export's"
)


def whole_batches(places: list[BatchPlace | None]) -> bool:
    """Whether `places` (one per record, in order) are whole batches: (1, n), (2, n), ..., (n, n)."""
    at = 0
    while at < len(places):
        place = places[at]
        if place is not None:
            size = place[1]
            if place != (1, size) or places[at : at + size] != [(i, size) for i in range(1, size + 1)]:
                return False
            at += size
        else:
            at += 1
    return True


def _carrier(entry: dict[str, Any]) -> dict[str, Any]:
    carried = entry.get(CARRIER)
    return carried if isinstance(carried, dict) else {}


def _place(value: object) -> BatchPlace | None:
    """A carried batch place, `[index, size]`, checked: anything else is no place (the check of the
    whole sequence then finds the batches do not fit)."""
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(type(n) is int for n in value)
        and 1 <= value[0] <= value[1]
        and value[1] >= 2
    ):
        return (value[0], value[1])
    return None


def _migrate(
    entries: list[tuple[int, dict[str, Any]]], version: int, reserved: set[str]
) -> list[tuple[int, dict[str, Any]]]:
    """Bring entries to version-3 meaning, without mutating the input (a derived id avoids `reserved`)."""
    out = [(line, dict(entry)) for line, entry in entries]
    if version < 2:
        # Version 1: ids follow the line; each entry continues the previous one; a compaction's
        # firstKeptEntryIndex counts the parsed entries with the header as entry 0.
        taken = set(reserved)
        ids = [pi_tree.fresh(f"l{line}", taken) for line, _ in out]
        by_index = {i + 1: entry_id for i, entry_id in enumerate(ids)}
        previous = None
        for (_, entry), entry_id in zip(out, ids, strict=True):
            entry["id"] = entry_id
            entry["parentId"] = previous
            previous = entry_id
            if entry.get("type") == "compaction" and "firstKeptEntryIndex" in entry:
                index = entry.pop("firstKeptEntryIndex")
                if type(index) is int and index in by_index:
                    entry["firstKeptEntryId"] = by_index[index]
    if version < 3:
        for _, entry in out:
            message = entry.get("message")
            if (
                entry.get("type") == "message"
                and isinstance(message, dict)
                and message.get("role") == "hookMessage"
            ):
                entry["message"] = {**message, "role": "custom"}
    return out


def _header_records(header: dict[str, Any], name: str | None = None) -> list[NewRecord]:
    carried = header.get(CARRIER)
    if isinstance(carried, dict) and "record" in carried:
        return [_carried(carried["record"], parent=None, node=False)]
    migrated = {k: v for k, v in header.items() if k != CARRIER} | {"version": PI_VERSION}
    session_id = pi_map.record_id(migrated.get("id"))
    journal = name or session_id  # named otherwise, the patch below carries the session's id
    at = pi_map.timestamp(migrated.get("timestamp"))
    body = Header(journal=journal, creator="pi", metadata={})
    extra = json_patch.diff(pi_form.header_entry(NewRecord(id=session_id, at=at, body=body)), migrated)
    if extra:
        body = Header(journal=journal, creator="pi", metadata={"pi": extra})
        stored = _as_stored(NewRecord(id=session_id, at=at, body=body))
        if orders := json_patch.key_orders(pi_form.header_entry(stored), migrated):
            body = Header(journal=journal, creator="pi", metadata={"pi": extra | {"order": orders}})
    return [NewRecord(id=session_id, at=at, body=body)]


def _entry_records(
    placed: pi_tree.Placed,
    parent: str | None,
    leaf: str | None,
    known: dict[str, tuple[bytes, str]],
    taken: set[str],
    *,
    nodes: Container[str] = (),
) -> tuple[list[NewRecord], list[BatchPlace | None], str | None]:
    """The records one Pi entry stands for, each one's carried batch place, and the leaf after them;
    `known` gains the bytes the entry shows for blobs its carried record references; a derived id avoids
    `taken` (and joins it)."""
    entry = placed.entry
    carried = _carrier(entry)
    before = carried.get("before", ())
    records = [_carried(r, parent=None, node=False) for r in before]
    places = [_place(r.get("batch")) for r in before]
    for record in records:
        if isinstance(record.body, LeafMoved):
            leaf = record.body.to_leaf
        elif isinstance(record.body, Reset):
            leaf = None
    if placed.record_id is None:
        return records, places, leaf
    if "record" in carried:
        node = _carried(carried["record"], parent=parent, node=True)
        known.update(_shown_blobs(node, entry, parent))
    else:
        node = _salted(_mapped(entry, parent, record_id=placed.record_id, nodes=nodes), carried)
    if parent != leaf:
        move = LeafMoved(from_leaf=leaf, to_leaf=parent, reason=INFERRED_MOVE, actor="pi")
        move_id = f"move:{node.id}"
        move_id = move_id if move_id not in taken else pi_tree.fresh(move_id, taken)
        taken.add(move_id)
        records.append(NewRecord(id=move_id, at=node.at, body=move))
        places.append(None)
    records.append(node)
    places.append(_place(carried.get("batch")))
    return records, places, node.id


def _shown_blobs(node: NewRecord, entry: dict[str, Any], parent: str | None) -> dict[str, tuple[bytes, str]]:
    """The bytes `entry` shows for the blobs `node` references: its text blocks and images, matched by
    their SHA-256 to the record's blob digests."""
    wanted = {
        b.digest: b.media_type for b in getattr(node.body, "content", ()) or () if isinstance(b, BlobBlock)
    }
    if not wanted:
        return {}
    try:
        shown = _mapped(entry, parent).body
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError, OSError, DecodeError):
        return {}
    found: dict[str, tuple[bytes, str]] = {}
    for block in getattr(shown, "content", ()) or ():
        data = block.text.encode() if isinstance(block, TextBlock) else _image_bytes(block)
        digest = hashlib.sha256(data).hexdigest() if data is not None else None
        if digest in wanted:
            found[digest] = (data, wanted[digest])  # type: ignore[assignment]
    return found


def _image_bytes(block: Any) -> bytes | None:
    return base64_payload(block.source) if isinstance(block, ImageBlock) else None


def _mapped(
    entry: dict[str, Any],
    parent: str | None,
    *,
    record_id: str | None = None,
    nodes: Container[str] | None = None,
) -> NewRecord:
    """A Pi entry as a record (`record_id`: the id import gave it, when not the entry's own); what the
    record cannot hold, the entry's own id and parentId included, is kept as a patch inside it. With
    `nodes` (the records before it), a compaction whose first kept entry is none of them keeps nothing."""
    entry = {k: v for k, v in entry.items() if k != CARRIER}
    entry_id = pi_map.record_id(entry.get("id") if record_id is None else record_id)
    at = pi_map.timestamp(entry.get("timestamp"))
    body = pi_map.body_of(entry, parent)
    if isinstance(body, Compaction) and nodes is not None and body.first_kept not in nodes:
        body = msgspec.structs.replace(body, first_kept=None)  # the patch keeps Pi's firstKeptEntryId
    record = NewRecord(id=entry_id, at=at, body=body)
    patch = json_patch.diff(pi_form.node_entry(record), entry)
    patched = _with_patch(record, patch)
    # Key order: what export will write once the record is stored (canonical JSON sorts every object)
    orders = json_patch.key_orders(pi_form.node_entry(_as_stored(patched)), entry)
    return _with_patch(record, patch | {"order": orders}) if orders else patched


def _with_patch(record: NewRecord, patch: dict[str, Any]) -> NewRecord:
    if not patch:
        return record
    body = record.body
    if isinstance(body, UserMessage | AssistantMessage | ToolResult | Compaction):
        body = msgspec.structs.replace(body, details={"pi": patch})
    elif isinstance(body, CustomEntry) and isinstance(body.data, dict) and PATCH not in body.data:
        body = msgspec.structs.replace(body, data={**body.data, PATCH: patch})
    else:
        msg = f"entry {record.id!r} has no form waybook can keep exactly"
        raise ValueError(msg)
    return NewRecord(id=record.id, at=record.at, body=body)


def _as_stored(record: NewRecord) -> NewRecord:
    """The record as a journal will give it back: its body through canonical JSON."""
    body = decode_body(canonical_json(record.body), where="a Pi entry")
    return NewRecord(id=record.id, at=record.at, body=body)


def _carried(wire: Any, *, parent: str | None, node: bool) -> NewRecord:
    """A waybook record carried in a Pi entry's `waybook` field by an earlier export."""
    if not isinstance(wire, dict) or not isinstance(wire.get("body"), dict):
        msg = f"the {CARRIER!r} field does not carry a record"
        raise TypeError(msg)
    data = dict(wire["body"])
    if node:
        data["parent"] = parent
    body = decode_body(canonical_json(data), where=f"a record carried in a Pi {CARRIER!r} field")
    if node != body.IS_NODE:
        msg = f"the {CARRIER!r} field carries a {'non-' if node else ''}node record where it cannot"
        raise ValueError(msg)
    record = NewRecord(id=pi_map.record_id(wire.get("id")), at=pi_map.timestamp(wire.get("at")), body=body)
    return _salted(record, wire)


def _salted(record: NewRecord, carried: dict[str, Any]) -> NewRecord:
    """`record` with the salt an export carried for it (a sealed record's, docs/erasure.md), so that
    appending it again gives its digest back; a carried value that is not a salt is ignored."""
    salt = carried.get("salt")
    if type(salt) is not str or not is_salt(salt):
        return record
    return msgspec.structs.replace(record, salt=salt)


def _why(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"missing field {exc.args[0]!r}"
    if isinstance(exc, OverflowError | OSError):
        return f"a date out of range ({exc})"
    return str(exc)


# --- export ---------------------------------------------------------------------------------------


def export_pi(
    records: Iterable[Record], *, shown: Callable[[Record], Record] | None = None
) -> Iterator[bytes]:
    """Pi version-3 session lines (without newlines) for a journal's records, in order.

    Pi derives its tree from each entry's parentId, so leaf moves and resets ride in the next entry's
    `waybook` field. Nodes Pi has no entry type for are wrapped in a Pi `custom` entry (customType
    `waybook.record`), which Pi keeps out of the model's context and which import unwraps. `shown` gives
    the record as Pi should see it (with its blobs inlined, say); an entry that would not re-import to the
    record itself carries the record, so nothing is lost either way.
    """
    pending: list[Record] = []
    leaf: str | None = None
    before_last: str | None = None  # the leaf before the last pending record
    last_id = "waybook-records"
    for record in records:
        body = record.body
        if isinstance(body, Header):
            carried = _batch(record)  # a record's batch place travels with it (a fork's header has one)
            yield _json(_exact(record, pi_form.header_entry(record), header=True, carried=carried))
        elif body.IS_NODE:
            if pending and pending[-1].batch is None and _inferred_move(pending[-1], record, before_last):
                pending.pop()  # import infers it again from the entry's parentId
            entry = pi_form.node_entry(shown(record) if shown is not None else record)
            carried = {"before": [_wire(r) for r in pending]} if pending else {}
            entry = _exact(record, entry, header=False, carried=carried | _batch(record))
            pending = []
            leaf = record.id
            yield _json(entry)
        else:
            pending.append(record)
            before_last = leaf
            if isinstance(body, LeafMoved):
                leaf = body.to_leaf
            elif isinstance(body, Reset):
                leaf = None
            last_id = f"waybook-records-{record.seq}"
    if pending:
        trailer = {
            "type": "custom",
            "id": last_id,
            "parentId": leaf,
            "timestamp": pending[-1].at,
            "customType": TRAILER,
            CARRIER: {"before": [_wire(r) for r in pending]},
        }
        yield _json(trailer)


def _inferred_move(last: Record, node: Record, leaf_before: str | None) -> bool:
    """Whether `last` is exactly the leaf move import infers for `node` when its parentId is not the
    leaf (Pi's branches after /tree), so the entry need not carry it."""
    parent = getattr(node.body, "parent", None)
    if last.id != f"move:{node.id}" or last.at != node.at or parent == leaf_before:
        return False
    inferred = LeafMoved(from_leaf=leaf_before, to_leaf=parent, reason=INFERRED_MOVE, actor="pi")
    return canonical_json(last.body) == canonical_json(inferred)


def _exact(
    record: Record | NewRecord, entry: dict[str, Any], *, header: bool, carried: dict[str, Any] | None = None
) -> dict[str, Any]:
    """`entry`, plus the record itself in its `waybook` field if the entry would not re-import to it."""
    carried = dict(carried or {})
    if carried:
        entry = {**entry, CARRIER: carried}
    try:
        if header:  # an import named the journal (`import_pi(name=...)`): the patch keeps the session id
            named = record.body.journal if isinstance(record.body, Header) else None
            (again,) = _header_records(entry, named)
        else:
            again = _mapped(entry, entry.get("parentId"))
        exact = (
            again.id == record.id
            and again.at == record.at
            and canonical_json(again.body) == canonical_json(record.body)
        )
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError, OSError, DecodeError):
        exact = False
    if not exact:
        carried["record"] = _wire(record)
        entry = {**entry, CARRIER: carried}
    return entry


def _wire(record: Record | NewRecord) -> dict[str, Any]:
    body = json.loads(canonical_json(record.body))
    body.pop("parent", None)
    return {"id": record.id, "at": record.at, "body": body} | _batch(record)


def _batch(record: Record | NewRecord) -> dict[str, Any]:
    """A record's batch place as its entry carries it (`{"batch": [index, size]}`; none when alone), and
    a sealed record's salt (`{"salt": "…"}`), so an import seals it again to the same digest."""
    place = getattr(record, "batch", None)
    salt = getattr(record, "salt", None)
    return ({} if place is None else {"batch": list(place)}) | ({} if salt is None else {"salt": salt})


def _json(value: dict[str, Any]) -> bytes:
    """One line as Pi writes it (Node's JSON.stringify: its number notation, key order kept)."""
    return js_json.stringify(value).encode()
