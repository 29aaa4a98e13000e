"""The secret corpus (issue 43): an example of every kind of secret redaction must catch, each with where
the kind comes from, and the shapes a secret takes in a session.

Sources, read from the repositories themselves:
- `issue 43`: the 35 kinds the fourth red team placed (13 of them missed by the old patterns);
- `detect-secrets`: Yelp/detect-secrets `detect_secrets/plugins/<plugin>.py` (commit 5e14193);
- `gitleaks`: gitleaks/gitleaks `config/gitleaks.toml`, rule id named (commit b58d3f1);
- `docs`: what docs/export.md listed as not caught before issue 43.

Every secret here is made up (random characters in the kind's shape, seeded so the corpus is the same
on every run). `core` is the part that must never appear in anything redacted; `text` is the secret in
the context it is usually pasted in.
"""

from __future__ import annotations

import base64
import random
import string
from typing import Final, NamedTuple

_random = random.Random(43)
ALNUM: Final = string.ascii_letters + string.digits
HEX: Final = "0123456789abcdef"


def _r(n: int, alphabet: str = ALNUM) -> str:
    return "".join(_random.choice(alphabet) for _ in range(n))


class Secret(NamedTuple):
    kind: str
    text: str
    core: str
    source: str


def _s(kind: str, core: str, source: str, template: str = "{}") -> Secret:
    return Secret(kind, template.format(core), core, source)


_PEM_BODY = "\n".join(_r(64, ALNUM + "+/") for _ in range(4))
_AWS_ID = "AKIA" + _r(16, string.ascii_uppercase + string.digits)
_AWS_SECRET = _r(20, ALNUM) + "/" + _r(19, ALNUM)
_BASIC = base64.b64encode(b"deploy:" + _r(16).encode()).decode()
_GHP = "ghp_" + _r(36)

SECRETS: Final[tuple[Secret, ...]] = (
    # --- the 22 kinds the old patterns caught (issue 43's 35, first part) -------------------------------
    _s(
        "private-key",
        _PEM_BODY,
        "detect-secrets private_key.py; gitleaks private-key",
        "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----",
    ),
    _s(
        "private-key",
        _PEM_BODY.replace("\n", ""),
        "detect-secrets private_key.py (OPENSSH)",
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----",
    ),
    _s(
        "private-key",
        _r(60),
        "detect-secrets private_key.py (an END line cut off)",
        "-----BEGIN EC PRIVATE KEY-----\n{}",
    ),
    _s(
        "jwt",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI" + _r(12) + "In0." + _r(43, ALNUM + "-_"),
        "detect-secrets jwt.py; gitleaks jwt",
    ),
    _s(
        "url-password",
        "hunter2-" + _r(8),
        "detect-secrets basic_auth.py",
        "postgres://admin:{}@db.internal/shop",
    ),
    _s("url-password", "p@ss@" + _r(8), "issue 43 (a password holding @)", "mysql://root:{}@db:3306"),
    _s("url-password", _r(12), "issue 43 (no user)", "redis://:{}@cache:6379/0"),
    _s("bearer-token", _r(32, ALNUM + "._-"), "gitleaks curl-auth-header", "Authorization: Bearer {}"),
    _s("basic-auth", _BASIC, "gitleaks curl-auth-header", "Authorization: Basic {}"),
    _s("stripe-key", "sk_live_" + _r(24), "detect-secrets stripe.py; gitleaks stripe-access-token"),
    _s("stripe-key", "rk_test_" + _r(24), "gitleaks stripe-access-token"),
    _s("anthropic-key", "sk-ant-api03-" + _r(93, ALNUM + "_-") + "AA", "gitleaks anthropic-api-key"),
    _s(
        "openai-key",
        "sk-proj-" + _r(58, ALNUM + "_-") + "T3BlbkFJ" + _r(58, ALNUM + "_-"),
        "detect-secrets openai.py; gitleaks openai-api-key",
    ),
    _s("openai-key", "sk-" + _r(48), "issue 43 (a legacy key)"),
    _s("aws-access-key", _AWS_ID, "detect-secrets aws.py; gitleaks aws-access-token"),
    _s("aws-secret-key", _AWS_SECRET, "detect-secrets aws.py", "aws_secret_access_key = {}"),
    _s("aws-secret-key", _AWS_SECRET, "issue 27 (beside its key id)", f"my key is {_AWS_ID} {{}}"),
    _s("github-token", _GHP, "detect-secrets github_token.py; gitleaks github-pat"),
    _s("github-token", "github_pat_" + _r(22) + "_" + _r(59), "gitleaks github-fine-grained-pat"),
    _s("github-token", "ghs_" + _r(36), "gitleaks github-app-token"),
    _s(
        "slack-token",
        "xoxb-" + _r(12, string.digits) + "-" + _r(13, string.digits) + "-" + _r(24),
        "detect-secrets slack.py; gitleaks slack-bot-token",
    ),
    _s("google-api-key", "AIza" + _r(35, ALNUM + "_-"), "gitleaks gcp-api-key"),
    _s("assigned-secret", "hunter2" + _r(4), "detect-secrets keyword.py", "DB_PASSWORD={}"),
    _s("assigned-secret", _r(16), "detect-secrets keyword.py", '"client_secret": "{}"'),
    _s("assigned-secret", _r(20), "gitleaks generic-api-key", "export API_KEY={}"),
    _s("assigned-secret", "swordfish", "issue 27", "with secret=swordfish"),
    # --- the 13 kinds issue 43 found passing through -----------------------------------------------------
    _s(
        "basic-auth",
        _BASIC,
        "issue 43 (Basic auth in a JSON headers map)",
        '{{"headers": {{"Authorization": "Basic {}"}}}}',
    ),
    _s("assigned-secret", _r(32), "issue 43 (*_TOKEN= lines)", "SLACK_BOT_TOKEN={}"),
    _s("assigned-secret", _r(24), "issue 43 (a JSON token field)", '{{"token": "{}", "ok": true}}'),
    _s("assigned-secret", "correct-horse-" + _r(10), "issue 43 (passphrase:)", "passphrase: {}"),
    _s(
        "gitlab-token",
        "glpat-" + _r(20, ALNUM + "_-"),
        "issue 43; detect-secrets gitlab_token.py; gitleaks gitlab-pat",
    ),
    _s(
        "slack-webhook",
        "T" + _r(8) + "/B" + _r(8) + "/" + _r(24),
        "issue 43; detect-secrets slack.py; gitleaks slack-webhook-url",
        "https://hooks.slack.com/services/{}",
    ),
    _s(
        "sendgrid-key",
        "SG." + _r(22, ALNUM + "_-") + "." + _r(43, ALNUM + "_-"),
        "issue 43; detect-secrets sendgrid.py; gitleaks sendgrid-api-token",
    ),
    _s("stripe-webhook-secret", "whsec_" + _r(32), "issue 43 (Stripe whsec_)"),
    _s(
        "azure-storage-key",
        _r(86, ALNUM + "+/") + "==",
        "issue 43 / docs (Azure); detect-secrets azure_storage_key.py",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={};EndpointSuffix=core.windows.net",
    ),
    _s(
        "gcp-service-account",
        "".join(_random.choice(HEX) for _ in range(40)),
        "issue 43 / docs (GCP service-account JSON)",
        '{{"type": "service_account", "private_key_id": "{}"}}',
    ),
    _s(
        "private-key",
        _PEM_BODY.replace("\n", "\\n"),
        "issue 43 / docs (GCP service-account JSON's PEM)",
        '"private_key": "-----BEGIN PRIVATE KEY-----\\n{}\\n-----END PRIVATE KEY-----\\n"',
    ),
    _s(
        "huggingface-token",
        "hf_" + _r(34, string.ascii_letters),
        "issue 43 / docs (Hugging Face); gitleaks huggingface-access-token",
    ),
    _s(
        "npm-token",
        "npm_" + _r(36),
        "issue 43 / docs (npm); detect-secrets npm.py; gitleaks npm-access-token",
    ),
    _s(
        "pypi-token",
        "pypi-AgEIcHlwaS5vcmc" + _r(70, ALNUM + "_-"),
        "issue 43 / docs (PyPI); detect-secrets pypi_token.py; gitleaks pypi-upload-token",
    ),
    # --- what detect-secrets' plugins and gitleaks' rules name beyond those ------------------------------
    _s("azure-client-secret", _r(3) + "8Q~" + _r(34, ALNUM + "_~.-"), "gitleaks azure-ad-client-secret"),
    _s(
        "discord-bot-token",
        "M" + _r(23) + "." + _r(6) + "." + _r(27),
        "detect-secrets discord.py",
        "discord bot token {}",
    ),
    _s(
        "discord-webhook",
        _r(18, string.digits) + "/" + _r(68, ALNUM + "_-"),
        "waybook (webhook URL)",
        "https://discord.com/api/webhooks/{}",
    ),
    _s(
        "mailchimp-key",
        "".join(_random.choice(HEX) for _ in range(32)) + "-us12",
        "detect-secrets mailchimp.py; gitleaks mailchimp-api-key",
    ),
    _s(
        "twilio-key",
        "SK" + "".join(_random.choice(HEX) for _ in range(32)),
        "detect-secrets twilio.py; gitleaks twilio-api-key",
    ),
    _s("square-token", "sq0csp-" + _r(43, ALNUM + "_-"), "detect-secrets square_oauth.py"),
    _s("telegram-bot-token", "AA" + _r(33, ALNUM + "_-"), "detect-secrets telegram_token.py", "123456789:{}"),
    _s("artifactory-token", "AKCp" + _r(69), "detect-secrets artifactory.py; gitleaks artifactory-api-key"),
    _s(
        "shopify-token",
        "shpat_" + "".join(_random.choice(HEX) for _ in range(32)),
        "gitleaks shopify-access-token",
    ),
    _s(
        "digitalocean-token",
        "dop_v1_" + "".join(_random.choice(HEX) for _ in range(64)),
        "gitleaks digitalocean-pat",
    ),
    _s(
        "databricks-token",
        "dapi" + "".join(_random.choice(HEX) for _ in range(32)),
        "gitleaks databricks-api-token",
    ),
    _s(
        "age-secret-key",
        "AGE-SECRET-KEY-1" + _r(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"),
        "gitleaks age-secret-key",
    ),
    _s("vault-token", "hvs." + _r(95, ALNUM + "_-"), "gitleaks vault-service-token"),
    _s("linear-api-key", "lin_api_" + _r(40), "gitleaks linear-api-key"),
    _s("perplexity-key", "pplx-" + _r(48), "gitleaks perplexity-api-key"),
    _s("doppler-token", "dp.pt." + _r(43), "gitleaks doppler-api-token"),
    _s("planetscale-token", "pscale_tkn_" + _r(40), "gitleaks planetscale-api-token"),
    _s(
        "postman-key",
        "PMAK-"
        + "".join(_random.choice(HEX) for _ in range(24))
        + "-"
        + "".join(_random.choice(HEX) for _ in range(34)),
        "gitleaks postman-api-token",
    ),
    _s("pulumi-token", "pul-" + "".join(_random.choice(HEX) for _ in range(40)), "gitleaks pulumi-api-token"),
    _s(
        "grafana-token",
        "glsa_" + _r(32) + "_" + "".join(_random.choice(HEX) for _ in range(8)),
        "gitleaks grafana-service-account-token",
    ),
    _s(
        "sentry-token",
        "sntryu_" + "".join(_random.choice(HEX) for _ in range(64)),
        "gitleaks sentry-user-token",
    ),
    _s("onepassword-token", "ops_eyJ" + _r(250, ALNUM + "+/"), "gitleaks 1password-service-account-token"),
    _s("dynatrace-token", "dt0c01." + _r(24) + "." + _r(64), "gitleaks dynatrace-api-token"),
    _s(
        "rubygems-token",
        "rubygems_" + "".join(_random.choice(HEX) for _ in range(48)),
        "gitleaks rubygems-api-token",
    ),
    _s("alibaba-access-key", "LTAI" + _r(20), "gitleaks alibaba-access-key-id"),
    _s(
        "newrelic-key",
        "NRAK-" + _r(27, string.ascii_uppercase + string.digits),
        "gitleaks new-relic-user-api-key",
    ),
    _s("cookie", _r(32), "docs (cookies and session ids)", "Cookie: sessionid={}; theme=dark"),
    _s("password-flag", "Tr0ub4dor" + _r(4), "docs (passwords given as flags)", "psql --password {} -h db"),
    _s(
        "password-flag",
        "s3cret" + _r(6),
        "gitleaks curl-auth-user",
        "curl -u admin:{} https://api.example.com",
    ),
    _s("password-flag", "hunter" + _r(6), "docs (mysql -pPASSWORD)", "mysql -u root -p{} shop"),
    _s(
        "npm-token",
        "".join(_random.choice(HEX) for _ in range(8)) + "-aaaa-bbbb-cccc-" + _r(12, HEX),
        "detect-secrets npm.py (.npmrc)",
        "//registry.npmjs.org/:_authToken={}",
    ),
)
"""Every example; `kinds()` groups them."""


def kinds() -> set[str]:
    return {secret.kind for secret in SECRETS}


def shapes(secret: Secret) -> list[str]:
    """The secret as sessions hold it: as written, after a word, glued after `_` (a token), in a URL
    (a token as a
    URL's user: `https://ghp_...@github.com/...`), inside a JSON string, on a line of its own."""
    found = [secret.text, f"see: {secret.text} here", f'{{"value": "{secret.text}"}}', f"\n{secret.text}\n"]
    if secret.text == secret.core:  # a bare token: glued after `_`, and as a URL's user
        found.append(f"see id_{secret.core} here")
    if secret.text == secret.core and "/" not in secret.core and ":" not in secret.core:
        found.append(f"git clone https://{secret.core}@github.com/acme/app.git")
        found.append(f"https://x-access-token:{secret.core}@github.com/acme/app")
    return found
