"""The canonical memory authority's values: routes, receipts and read results (all frozen)."""

from __future__ import annotations

from typing import Any, Literal

import attrs

from waybook.codecs import digest_of
from waybook.journal._roles.memory import header_limits
from waybook.memory.canonical._nominations import NominatedRecord
from waybook.memory.working import Revision
from waybook.model import Head, Header


@attrs.frozen
class Route:
    """A registered route: where nominations may go, and for which purposes."""

    name: str
    purposes: frozenset[str]


def binding_of(header: Header) -> str:
    """The binding digest: which canonical store an authority adopts into. Its space (the canonical
    journal's header id: one physical authority), its realm (whose memory: the header's scope) and its
    profile (the role and the rules its journal keeps: limits, required descriptions)."""
    scope = header.metadata.get("scope")
    return digest_of(
        {
            "kind": "waybook.binding/2",
            "space": header.journal,
            "realm": scope if isinstance(scope, str) else None,
            "profile": {
                "role": header.role,
                "limits": header_limits(header).as_json(),
                "require_description": header.metadata.get("require_description") is True,
            },
        }
    )


def fields_digest(fields: dict[str, Any]) -> str:
    return digest_of(fields)


def head_json(head: Head) -> dict[str, Any]:
    return {"seq": head.seq, "digest": head.digest}


@attrs.frozen
class PinReceipt:
    authority: str
    binding: str
    prior: Head
    new: Head
    status: Literal["advanced", "unchanged"]
    receipt_sha256: str

    @staticmethod
    def make(authority: str, binding: str, prior: Head, new: Head, status: str) -> PinReceipt:
        fields = {
            "kind": "waybook.pin_receipt/1",
            "authority": authority,
            "binding": binding,
            "prior": head_json(prior),
            "new": head_json(new),
            "status": status,
        }
        return PinReceipt(authority, binding, prior, new, status, fields_digest(fields))  # type: ignore[arg-type]


@attrs.frozen
class AdoptionReceipt:
    actor: str
    authority: str
    binding: str
    nomination: str
    prior: Head
    new: Head
    status: Literal["adopted", "already-present"]
    operation: str | None
    operation_digest: str | None
    receipt_sha256: str

    @staticmethod
    def make(
        *,
        actor: str,
        authority: str,
        binding: str,
        nomination: str,
        prior: Head,
        new: Head,
        status: str,
        operation: str | None,
        operation_digest: str | None,
    ) -> AdoptionReceipt:
        fields = {
            "kind": "waybook.adoption_receipt/1",
            "actor": actor,
            "authority": authority,
            "binding": binding,
            "nomination": nomination,
            "prior": head_json(prior),
            "new": head_json(new),
            "status": status,
            "operation": operation,
            "operation_digest": operation_digest,
        }
        return AdoptionReceipt(
            actor,
            authority,
            binding,
            nomination,
            prior,
            new,
            status,  # type: ignore[arg-type]
            operation,
            operation_digest,
            fields_digest(fields),
        )


@attrs.frozen
class RememberReceipt:
    authority: str
    request_id: str
    first_seq: int
    head: Head
    receipt_sha256: str


@attrs.frozen
class QueryResult:
    authority: str
    head: Head
    records: tuple[NominatedRecord, ...]


@attrs.frozen
class Explanation:
    """Why canonical memory holds what it holds for one key, at one pin. Kept under `handle`."""

    handle: int
    key: str
    head: Head
    present: bool
    digest: str | None
    text: str | None
    revisions: tuple[Revision, ...]
    adopted_by: tuple[str, ...]
