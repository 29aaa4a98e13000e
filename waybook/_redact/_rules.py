"""The secret kinds redaction finds: one rule each, with where the rule comes from.

Every regular expression here starts with a literal (a token's prefix, `://`, a keyword of the lower-cased
text): one pass over a text finds where each literal occurs (waybook._redact._literals), and a pattern
is matched only there, never tried at every position: that is what keeps redaction within 2x of the
export without it (bench/redact.py). A boundary that would have to be a look-behind at the start is
checked in code instead (`Rule.left`), and a fixed-width part before the literal is a `lead`. Only the
`secret` group of a match is masked when a rule has one; else the whole match.

Sources: `detect-secrets` is Yelp/detect-secrets `detect_secrets/plugins/*.py` (the plugin named);
`gitleaks` is gitleaks/gitleaks `config/gitleaks.toml` (the rule id named); `waybook` is ours (issue 27
and 43, docs/export.md). tests/helpers/secret_corpus.py holds an example of every kind.
"""

from __future__ import annotations

import re
from typing import Final, Literal

import attrs

Before = Literal["any", "alnum", "word"]
"""What may not stand right before a match: `alnum` forbids a letter or digit (a token glued after `_`,
`id_AKIA...`, is still found), `word` forbids a letter, digit or `_`, `any` forbids nothing."""


@attrs.frozen
class Rule:
    """One kind of secret: its name (the mask says `[REDACTED:<name>]`), its pattern, and its source."""

    name: str
    pattern: re.Pattern[str]
    source: str
    lowered: bool = False
    """The pattern runs on the ASCII-lower-cased text (keyword rules); spans are the same."""
    left: Before = "alnum"
    lead: re.Pattern[str] | None = None
    """A fixed-width pattern the text must match right before the match (part of what is masked): the
    pattern itself can then start with a literal (`k_live_` after `[rsp]`)."""
    lead_width: int = 0
    needle: str = ""
    """A lower-cased word the text must hold for the rule to run (a rule with no literal of its own)."""
    starts: tuple[str, ...] = ()
    """The literals a match starts with (each occurrence of one is where the pattern is matched): the
    more specific, the fewer places the pattern is tried (`--pass`, not `--`)."""
    token: bool = False
    bytes_pattern: re.Pattern[bytes] | None = None
    """The pattern for the lower-cased bytes of a text (a `lowered` rule's)."""
    """Every match is a run of at least TOKEN_RUN token characters (a provider's key): the detector
    looks for its literals only where a text has such a run (waybook._redact's gate)."""


def _rule(
    name: str,
    pattern: str,
    source: str,
    *,
    flags: int = 0,
    lowered: bool = False,
    left: Before = "alnum",
    lead: tuple[str, int] | None = None,
    needle: str = "",
    starts: tuple[str, ...] = (),
    context: bool = False,
) -> Rule:
    starts = starts or (() if needle else (_leading_literal(pattern),))
    if not needle and not all(starts):
        msg = f"rule {name}: its pattern {pattern[:40]!r} starts with no literal; give `starts`"
        raise ValueError(msg)
    return Rule(
        name,
        re.compile(pattern, flags),
        source,
        lowered=lowered,
        left=left,
        lead=re.compile(lead[0]) if lead else None,
        lead_width=lead[1] if lead else 0,
        needle=needle,
        starts=starts,
        token=not (lowered or context or needle),
        bytes_pattern=re.compile(pattern.encode(), flags) if lowered else None,
    )


def _leading_literal(pattern: str) -> str:
    """The characters every match of `pattern` starts with (its escapes read, up to its first operator)."""
    out: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern) and pattern[index + 1] in ".-/~:_":
            literal, step = pattern[index + 1], 2
        elif char.isalnum() or char in "-_:/~=@ ":
            literal, step = char, 1
        else:
            break
        following = pattern[index + step : index + step + 1]
        if following and following in "?*{":
            break  # the literal is optional or repeated: it ends before it
        out.append(literal)
        index += step
    return "".join(out)


TOKEN_CHARS: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/=.~:"
TOKEN_RUN: Final = 20
"""The shortest key a token rule matches (lead included), in characters of TOKEN_CHARS."""
_END: Final = r"(?![A-Za-z0-9])"
"""A token ends where letters and digits end (a quote, a space, `@`, `/`, `.` or `_` may follow)."""
_END_WORD: Final = r"(?![A-Za-z0-9_-])"

RULES: Final[tuple[Rule, ...]] = (
    # --- blocks ---------------------------------------------------------------------------------------
    _rule(
        "private-key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
        r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        "detect-secrets PrivateKeyDetector; gitleaks private-key",
        flags=re.S,
        left="any",
        context=True,
    ),
    _rule(
        "private-key",
        r"PuTTY-User-Key-File-[23]:.*?(?:Private-MAC: *[0-9a-fA-F]+|\Z)",
        "detect-secrets PrivateKeyDetector (PuTTY-User-Key-File-2)",
        flags=re.S,
        left="any",
        context=True,
    ),
    # --- URLs -----------------------------------------------------------------------------------------
    # A URL's user and password, or a password alone after the scheme; it ends at the last @ before the
    # host, so one holding an @ is masked whole. Templates (`{password}`, `${PW}`, `[:PASSWORD]`) are not.
    _rule(
        "url-password",
        r"://(?P<secret>[^/\s:@\"'<>{}\[\]$]*:[^/\s\"'<>{}\[\]$]+)@[^/\s@\"'<>]+",
        "detect-secrets BasicAuthDetector",
        left="any",
        context=True,
    ),
    _rule(
        "slack-webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/+-]{20,})",
        "detect-secrets SlackDetector; gitleaks slack-webhook-url",
        left="any",
        context=True,
    ),
    _rule(
        "discord-webhook",
        r"discord(?:app)?\.com/api/webhooks/(?P<secret>[0-9]{5,30}/[A-Za-z0-9_-]{20,})",
        "waybook (a webhook URL is its own credential, like Slack's)",
        left="any",
        context=True,
    ),
    # --- provider tokens with a fixed prefix ------------------------------------------------------------
    _rule(
        "anthropic-key",
        r"sk-ant-[A-Za-z0-9_-]{13,}",
        "gitleaks anthropic-api-key, anthropic-admin-api-key",
    ),
    _rule(
        "openai-key",
        r"sk-(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_-]{17,}",
        "detect-secrets OpenAIDetector; gitleaks openai-api-key",
    ),
    _rule(
        "stripe-key",
        r"[rsp]k_(?:live|test|prod)_[0-9A-Za-z]{12,}",
        "detect-secrets StripeDetector; gitleaks stripe-access-token",
        starts=(
            "sk_live_",
            "sk_test_",
            "sk_prod_",
            "rk_live_",
            "rk_test_",
            "rk_prod_",
            "pk_live_",
            "pk_test_",
        ),
    ),
    _rule(
        "stripe-webhook-secret",
        r"whsec_[A-Za-z0-9+/=]{20,}",
        "waybook (issue 43: Stripe's webhook signing secret)",
    ),
    _rule(
        "aws-access-key",
        r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])",
        "detect-secrets AWSKeyDetector; gitleaks aws-access-token",
        left="alnum",
        starts=("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
    ),
    _rule(
        "github-token",
        r"gh[pousr]_[A-Za-z0-9]{30,}",
        "detect-secrets GitHubTokenDetector; gitleaks github-pat, github-oauth, github-app-token, "
        "github-refresh-token",
        starts=("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    _rule("github-token", r"github_pat_[A-Za-z0-9_]{22,}", "gitleaks github-fine-grained-pat"),
    _rule(
        "gitlab-token",
        r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas|ffct)-[A-Za-z0-9_.-]{20,}",
        "detect-secrets GitLabTokenDetector; gitleaks gitlab-pat, gitlab-deploy-token, gitlab-runner-"
        "authentication-token, gitlab-cicd-job-token, gitlab-feed-token, gitlab-ptt, ...",
        starts=tuple(
            f"gl{k}-" for k in ("pat", "dt", "ft", "soat", "rt", "cbt", "imt", "ptt", "agent", "oas", "ffct")
        ),
    ),
    _rule(
        "gitlab-token",
        r"GR1348941[A-Za-z0-9_-]{20,}",
        "detect-secrets GitLabTokenDetector; gitleaks gitlab-rrt",
    ),
    _rule(
        "slack-token",
        r"x(?:ox[abposre]|app)-[A-Za-z0-9-]{15,}",
        "detect-secrets SlackDetector; gitleaks slack-bot-token, slack-user-token, slack-app-token, ...",
        starts=("xox", "xapp-"),
    ),
    _rule("google-api-key", r"AIza[0-9A-Za-z_-]{35}" + _END_WORD, "gitleaks gcp-api-key"),
    _rule(
        "sendgrid-key",
        r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}",
        "detect-secrets SendGridDetector; gitleaks sendgrid-api-token",
    ),
    _rule(
        "npm-token", r"npm_[A-Za-z0-9]{36}" + _END, "detect-secrets NpmDetector; gitleaks npm-access-token"
    ),
    _rule(
        "npm-token",
        r"_authtoken=[ \t]*(?P<secret>[^\s\"']{8,})",
        "detect-secrets NpmDetector (.npmrc _authToken)",
        lowered=True,
        left="any",
    ),
    _rule(
        "pypi-token",
        r"pypi-AgE[A-Za-z0-9_-]{50,}",
        "detect-secrets PypiTokenDetector; gitleaks pypi-upload-token",
    ),
    _rule("huggingface-token", r"hf_[A-Za-z]{34}" + _END, "gitleaks huggingface-access-token"),
    _rule("huggingface-token", r"api_org_[A-Za-z]{34}" + _END, "gitleaks huggingface-organization-api-token"),
    _rule(
        "azure-storage-key",
        r"accountkey=(?P<secret>[a-z0-9+/]{86,88}={0,2})",
        "detect-secrets AzureStorageKeyDetector",
        lowered=True,
        left="any",
    ),
    _rule(
        "azure-client-secret",
        r"Q~[a-zA-Z0-9_~.-]{31,34}" + _END_WORD,
        "gitleaks azure-ad-client-secret",
        lead=(r"[a-zA-Z0-9_~.]{3}\d", 4),
    ),
    _rule(
        "discord-bot-token",
        r"[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}" + _END_WORD,
        "detect-secrets DiscordBotTokenDetector (only where the text says discord: no literal to search)",
        needle="discord",
    ),
    _rule(
        "mailchimp-key",
        r"-us[0-9]{1,2}" + _END,
        "detect-secrets MailchimpDetector; gitleaks mailchimp-api-key",
        lead=("[0-9a-f]{32}", 32),
    ),
    _rule(
        "twilio-key", r"SK[0-9a-f]{32}" + _END, "detect-secrets TwilioKeyDetector; gitleaks twilio-api-key"
    ),
    _rule(
        "square-token",
        r"sq0(?:csp|atp)-[0-9A-Za-z_-]{22,60}",
        "detect-secrets SquareOAuthDetector; gitleaks square-access-token",
    ),
    _rule(
        "telegram-bot-token",
        r":(?P<secret>AA[0-9A-Za-z_-]{33})" + _END_WORD,
        "detect-secrets TelegramBotTokenDetector; gitleaks telegram-bot-api-token",
        left="any",
        lead=("[0-9]{8}", 8),
        starts=(":AA",),
    ),
    _rule(
        "artifactory-token",
        r"AKC[a-zA-Z0-9]{17,}" + _END,
        "detect-secrets ArtifactoryDetector; gitleaks artifactory-api-key",
    ),
    _rule(
        "shopify-token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _END, "gitleaks shopify-access-token, ..."
    ),
    _rule(
        "digitalocean-token",
        r"do[opr]_v1_[a-f0-9]{64}" + _END,
        "gitleaks digitalocean-pat, ...",
        starts=("doo_v1_", "dop_v1_", "dor_v1_"),
    ),
    _rule("databricks-token", r"dapi[a-f0-9]{32}(?:-[0-9])?" + _END, "gitleaks databricks-api-token"),
    _rule(
        "age-secret-key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", "gitleaks age-secret-key"
    ),
    _rule(
        "vault-token",
        r"hv[sb]\.[A-Za-z0-9_-]{90,300}",
        "gitleaks vault-service-token, vault-batch-token",
        starts=("hvs.", "hvb."),
    ),
    _rule("linear-api-key", r"lin_api_[A-Za-z0-9]{40}" + _END, "gitleaks linear-api-key"),
    _rule("perplexity-key", r"pplx-[A-Za-z0-9]{48}" + _END, "gitleaks perplexity-api-key"),
    _rule("doppler-token", r"dp\.pt\.[A-Za-z0-9]{43}" + _END, "gitleaks doppler-api-token"),
    _rule("planetscale-token", r"pscale_(?:tkn|oauth|pw)_[A-Za-z0-9=._-]{32,64}", "gitleaks planetscale-*"),
    _rule("postman-key", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}", "gitleaks postman-api-token"),
    _rule("pulumi-token", r"pul-[a-f0-9]{40}" + _END, "gitleaks pulumi-api-token"),
    _rule(
        "grafana-token",
        r"gl(?:c|sa)_[A-Za-z0-9+/_]{32,400}={0,3}",
        "gitleaks grafana-cloud-api-token, grafana-service-account-token",
        starts=("glc_", "glsa_"),
    ),
    _rule("sentry-token", r"sntry[us]_[A-Za-z0-9+/=_]{40,}", "gitleaks sentry-user-token, sentry-org-token"),
    _rule(
        "onepassword-token", r"ops_eyJ[A-Za-z0-9+/]{100,}={0,3}", "gitleaks 1password-service-account-token"
    ),
    _rule("dynatrace-token", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", "gitleaks dynatrace-api-token"),
    _rule("rubygems-token", r"rubygems_[a-f0-9]{48}" + _END, "gitleaks rubygems-api-token"),
    _rule("alibaba-access-key", r"LTAI[A-Za-z0-9]{20}" + _END, "gitleaks alibaba-access-key-id"),
    _rule(
        "newrelic-key",
        r"NR(?:AK|II|JS)-[A-Za-z0-9]{19,32}" + _END,
        "gitleaks new-relic-user-api-key, ...",
        starts=("NRAK-", "NRII-", "NRJS-"),
    ),
    _rule(
        "jwt",
        r"eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{8,}",
        "detect-secrets JwtTokenDetector; gitleaks jwt",
    ),
    # --- headers and command-line credentials ----------------------------------------------------------
    _rule(
        "bearer-token",
        r"bearer[ \t]+(?P<secret>(?=[a-z0-9._~+/=-]*[0-9])[a-z0-9._~+/=-]{8,})",
        "gitleaks curl-auth-header; waybook",
        lowered=True,
    ),
    _rule(
        "basic-auth",
        r"basic[ \t]+(?P<secret>(?=[a-z0-9+/]*[0-9+/=])[a-z0-9+/]{8,}={0,2})" + r"(?![a-z0-9+/=])",
        "gitleaks curl-auth-header; waybook (Authorization: Basic, in a header line or a JSON headers map)",
        lowered=True,
    ),
    _rule(
        "cookie",
        r"cookie[\"']?[ \t]*:[ \t]*[\"']?"
        r"(?P<secret>[^\s\"';=]+=[^\s\"']{8,}(?:;[ \t]*[^\s\"';=]+=[^\s\"';]*)*)",
        "waybook (docs/export.md listed cookies and session ids as missed)",
        lowered=True,
        left="alnum",
    ),
    _rule(
        "password-flag",
        r"--(?:password|passwd|pass|token|api-key|secret|client-secret)(?:=|[ \t]+)"
        r"(?P<secret>[^\s\"'$<>-][^\s\"'<>]{2,})",
        "waybook (docs/export.md listed passwords given as flags as missed)",
        lowered=True,
        left="any",
        # each flag's own literal: `--` alone starts every option and Markdown rule of a text
        starts=("--pass", "--token", "--api-key", "--secret", "--client-secret"),
    ),
    _rule(
        "password-flag",
        r"curl\b[^\n]*?[ \t](?:-u|--user)[ \t]*[\"']?[^\s:\"']{1,64}:(?P<secret>[^\s\"'@]{3,})",
        "gitleaks curl-auth-user",
        lowered=True,
        left="alnum",
    ),
    _rule(
        "password-flag",
        r"(?:mysql|mysqldump|mariadb)\b[^\n]*?[ \t]-p(?P<secret>[^\s\"'-][^\s\"']{2,})",
        "waybook (a password glued to mysql's -p)",
        lowered=True,
        left="alnum",
        starts=("mysql", "mariadb"),  # mariadb's own client
    ),
    _rule(
        "password-flag",
        r"sshpass[ \t]+-p[ \t]*(?P<secret>[^\s\"'-][^\s\"']{2,})",
        "waybook (sshpass's password option)",
        lowered=True,
        left="alnum",
    ),
    _rule(
        "gcp-service-account",
        r"private_key_id[\"']?[ \t]*:[ \t]*\\?[\"'](?P<secret>[a-f0-9]{40})",
        "waybook (docs/export.md listed a GCP service-account JSON as missed)",
        lowered=True,
        left="any",
    ),
    _rule(
        "aws-secret-key",
        r"secret_?(?:access_?)?key[\"']?[ \t]*[:=][ \t]*[\"']?(?P<secret>[a-z0-9/+]{40})(?![a-z0-9/+=])",
        "detect-secrets AWSKeyDetector",
        lowered=True,
        left="alnum",
    ),
)
"""The pattern rules, in priority order: where two overlap, the mask names the earlier."""

KEYWORD_RULE: Final = "assigned-secret"
AWS_PAIR_RULE: Final = "aws-secret-key"
