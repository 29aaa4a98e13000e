"""Redaction you can count on (issue 43): every kind of the secret corpus is caught in every field of a
record and every export shape; real code and prose are left alone (at most 1 false positive per 10,000
lines); masking twice equals masking once."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.helpers.plain_corpus import documented_example, line_count, texts
from tests.helpers.secret_corpus import SECRETS, Secret, kinds, shapes
from tests.helpers.secret_sessions import FIELDS, leaks, session_holding
from waybook._redact import KINDS, Redactor, find_secrets

GHP = next(s.core for s in SECRETS if s.core.startswith("ghp_"))
VARIANTS = [shape for secret in SECRETS for shape in shapes(secret)]


def test_the_corpus_holds_at_least_40_kinds_each_with_its_source() -> None:
    assert len(kinds()) >= 40
    assert set(KINDS) == kinds()  # every kind the detector names has an example, and no example is unnamed
    for secret in SECRETS:
        assert secret.source.strip(), secret.kind
        assert secret.core in secret.text


@pytest.mark.parametrize("secret", SECRETS, ids=[f"{s.kind}-{i}" for i, s in enumerate(SECRETS)])
def test_a_secret_in_every_field_of_a_record_is_masked_in_every_export_shape(secret: Secret) -> None:
    for shape in shapes(secret):
        assert leaks(session_holding(shape), secret.core) == {}, shape


@pytest.mark.parametrize(
    "text",
    [
        '{"headers": {"Authorization": "Basic ZGVwbG95OnJ4VWxSTWVKUWh0RjVYVTk="}}',
        "GITLAB_TOKEN=Zk3pQ9vX2mL8rT4wN6yB",
        '{"token": "Zk3pQ9vX2mL8rT4wN6yB"}',
        "passphrase: correct-horse-Zk3pQ9vX",
        "glpat-Zk3pQ9vX2mL8rT4wN6yB",
        "https://hooks.slack.com/services/T0Zk3pQ9v/B0X2mL8rT/4wN6yBZk3pQ9vX2mL8rT4wN6y",
        "SG.Zk3pQ9vX2mL8rT4wN6yB_a.Zk3pQ9vX2mL8rT4wN6yB_aZk3pQ9vX2mL8rT4wN6yB_aZ",
        "whsec_Zk3pQ9vX2mL8rT4wN6yBZk3pQ9vX2mL8",
        "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",
        "npm_Zk3pQ9vX2mL8rT4wN6yBZk3pQ9vX2mL8rT4w",
        "pypi-AgEIcHlwaS5vcmcZk3pQ9vX2mL8rT4wN6yBZk3pQ9vX2mL8rT4wN6yBZk3pQ9vX2mL8rT4wN6yB",
    ],
)
def test_the_kinds_that_passed_through_before_issue_43_are_masked(text: str) -> None:
    assert find_secrets(text), text


@pytest.mark.parametrize("field", FIELDS)
def test_ids_and_tool_names_are_scanned_like_text(field: str) -> None:
    assert leaks(session_holding(GHP, fields=(field,)), GHP) == {}


def test_code_that_names_a_key_is_left_alone() -> None:
    for code in (
        "const apiKey = await getApiKey();",
        "token = tokenizer.encode(text)",
        "def login(password: str) -> None:",
        "client(api_key=api_key, password=password)",
        "secret = secrets.token_hex(16)",
        "max_tokens=4096",
        "apiKey: 'proxy-handled',",
        "password_hash = bcrypt(password)",
    ):
        assert find_secrets(code) == [], code


def test_real_code_and_prose_have_at_most_one_false_positive_per_10000_lines() -> None:
    lines = 0
    false = []
    seen: set[str] = set()
    for where, text in texts():
        if text in seen:
            continue
        seen.add(text)
        lines += line_count(text)
        if not documented_example(text):
            false += [(where, text[s:e]) for s, e, _ in find_secrets(text)]
    assert lines > 50_000
    assert len(false) * 10_000 <= lines, false


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(VARIANTS) | st.text(max_size=40), min_size=1, max_size=4),
    st.sampled_from(["", " ", "\n", "_", "@", ":", "/"]),
)
@example([f"https://{GHP}@github.com/acme/app.git"], "")
@example([f"https://x-access-token:{GHP}@github.com/x"], "")
@example(["postgres://admin:[REDACTED:url-password]@db/x"], "")
def test_masking_twice_equals_masking_once(pieces: list[str], glue: str) -> None:
    text = glue.join(pieces)
    once = Redactor().text(text)
    assert Redactor().text(once) == once


def test_masking_every_corpus_variant_twice_equals_masking_it_once() -> None:
    for variant in VARIANTS:
        once = Redactor().text(variant)
        assert Redactor().text(once) == once, variant


def test_a_redactor_counts_a_text_each_time_it_masks_it_even_when_remembered() -> None:
    redactor = Redactor()
    for _ in range(3):
        assert redactor.text(f"key {GHP}") == "key [REDACTED:github-token]"
    assert redactor.counts == {"github-token": 3}
