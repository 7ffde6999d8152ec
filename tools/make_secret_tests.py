"""Write the data-only tests of spec/conformance/secrets/ (spec/conformance.md 2.6).

Each input below is run through the Python implementation and written with its findings
and redacted output; every implementation's test suite then checks it gets the same. Review
the diff of the written files: they are the specification. Run
``python tools/make_secret_tests.py`` after a change to spec/secrets/rules.json.
"""

from __future__ import annotations

import base64
import json
import shutil
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from secret_samples import SAMPLES  # noqa: E402

from threads_cases.case.secrets import (  # noqa: E402
    find_in_value,
    kinds_in,
    redact_bytes,
    redact_text,
    redact_value,
    scan_bytes,
)
from threads_cases.core.canonical import canonical_document  # noqa: E402

OUT = ROOT / "spec" / "conformance" / "secrets"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # AWS's documented example values
# fabricated values of the right shape; none is a real credential
TEXTS: list[tuple[str, str, str]] = [
    (
        "private-key",
        "an RSA private key block is one secret, header to footer",
        "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA3x\n"
        "-----END RSA PRIVATE KEY-----\nend",
    ),
    (
        "private-key-unterminated",
        "a private key without its footer is redacted to where its body ends",
        '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA" and more',
    ),
    ("anthropic-key", "an Anthropic API key", "ANTHROPIC_API_KEY=sk-ant-api03-" + "Zq9x" * 20),
    ("openai-key", "an OpenAI project key", "use sk-proj-" + "Ab3d" * 12 + " here"),
    ("aws-key-id", "an AWS access key id", "id AKIAIOSFODNN7EXAMPLE."),
    (
        "aws-secret-labelled",
        "the labelled AWS secret access key: the label stays, the value goes",
        f"aws_secret_access_key = {AWS_SECRET}",
    ),
    (
        "aws-secret-camel-case",
        "SecretAccessKey in JSON text is the secret half of an AWS pair",
        f'{{"AccessKeyId": "ASIAIOSFODNN7EXAMPLE", "SecretAccessKey": "{AWS_SECRET}"}}',
    ),
    (
        "aws-pair-csv",
        "an unlabelled 40-character secret next to an access key id is its secret half",
        f"Access key ID,Secret access key\nAKIAIOSFODNN7EXAMPLE,{AWS_SECRET}\n",
    ),
    (
        "aws-lone-40-chars",
        "a lone 40-character string without a key id is not a secret",
        f"digest {AWS_SECRET}",
    ),
    (
        "aws-session-token",
        "an AWS session token after its label",
        "AWS_SESSION_TOKEN=" + "FwoGZXIvYXdzE" * 9,
    ),
    (
        "azure-account-key",
        "the AccountKey of an Azure connection string",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + "q8Zt" * 11 + "==;",
    ),
    (
        "azure-sas",
        "the sig of an Azure shared access signature",
        "https://acct.blob.core.windows.net/c?sv=2022-11-02&sig=aB3dE5fG7hJ9kL1mN3pQ5r%3D",
    ),
    ("github-token", "a GitHub personal access token", "token ghp_" + "a" * 36),
    ("github-fine-grained", "a fine-grained GitHub token", "github_pat_" + "11AB" * 8),
    ("gitlab-token", "a GitLab token", "glpat-" + "x1Y2" * 5),
    ("google-api-key", "a Google API key", "key=AIza" + "B" * 35),
    ("google-oauth", "a Google OAuth access token", "ya29." + "c" * 30),
    ("google-client-secret", "a Google OAuth client secret", "GOCSPX-" + "Ab1_" * 7),
    ("slack-token", "a Slack bot token", "xoxb-1234567890-abcdef"),
    (
        "slack-webhook",
        "the secret path of a Slack webhook URL",
        "POST https://hooks.slack.com/services/T0001/B0002/XyZ0123456789",
    ),
    ("stripe-key", "a Stripe live secret key", "sk_live_" + "d" * 24),
    ("huggingface-token", "a Hugging Face token", "hf_" + "e" * 34),
    ("npm-token", "an npm token", "//registry.npmjs.org/:_authToken=npm_" + "f" * 36),
    ("pypi-token", "a PyPI upload token", "password = pypi-AgEIcHlwaS5vcmc" + "x1Y2" * 14),
    (
        "jwt",
        "a JSON Web Token",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
    (
        "bearer",
        "a bearer token after its scheme",
        "Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345",
    ),
    (
        "basic-auth-header",
        "the credentials of an HTTP basic Authorization header",
        "Authorization: Basic dXNlcjpodW50ZXIy",
    ),
    (
        "basic-auth-url",
        "the password of a URL with credentials; the user name stays",
        "postgres://admin:hunter22@db.internal:5432/app",
    ),
    ("sendgrid", "a SendGrid API key", "SG." + "a" * 22 + "." + "b" * 43),
    ("twilio", "a Twilio API key", "SK" + "0123456789abcdef" * 2),
    ("mailgun", "a Mailgun API key", "key-" + "0123456789abcdef" * 2),
    ("digitalocean", "a DigitalOcean token", "dop_v1_" + "ab12" * 16),
    ("shopify", "a Shopify access token", "shpat_" + "a1b2" * 8),
    ("databricks", "a Databricks token", "dapi" + "0a1b" * 8),
    ("telegram", "a Telegram bot token", "bot 123456789:AA" + "h" * 33),
    ("square", "a Square access token", "sq0atp-" + "Q" * 22),
    ("linear", "a Linear API key", "lin_api_" + "L" * 40),
    ("age-key", "an age secret key", "AGE-SECRET-KEY-1" + "QPZRY9X8GF" * 5 + "2TVDW0S3"),
    (
        "connection-string-password",
        "the password of a database connection string",
        "Server=db;User Id=app;Password=hunter22;Encrypt=true",
    ),
    (
        "password-json-text",
        'a "password": value in JSON text; the label stays',
        '{"user": "ana", "password": "correct horse battery"}',
    ),
    ("password-yaml", "a quoted password after a colon", "db:\n  password: 'hunter22'\n"),
    ("client-secret", "a quoted client secret", "client_secret='s3cr3t-value'"),
    (
        "token-field-text",
        "a quoted token value after its label",
        '"refresh_token": "rt-0123456789"',
    ),
    ("env-secret", "an unquoted upper-case secret variable", "export DB_PASSWORD=hunter22"),
    (
        "env-secret-reference",
        "a variable reference is not a secret",
        "DB_PASSWORD=$SECRET_FROM_VAULT",
    ),
    (
        "same-secret-two-labels",
        "one secret under two labels gets one placeholder",
        f"aws_secret_access_key={AWS_SECRET} and SecretAccessKey: {AWS_SECRET}",
    ),
    (
        "already-redacted",
        "a placeholder is not a secret: redaction is idempotent",
        "Authorization: Bearer [REDACTED:0123456789abcdef] and "
        'password: "[REDACTED:0123456789abcdef]"',
    ),
    (
        "non-bmp-around",
        "characters beyond the BMP around a secret do not move it",
        "\U0001f511 ghp_" + "a" * 36 + " \U0001d4b3",
    ),
    (
        "ordinary-text",
        "ordinary prose with look-alike words holds no secret",
        "The bearer of this token, a basic password policy, sk-ant is short, AKIA-not-a-key.",
    ),
    (
        "short-password",
        "a quoted password shorter than 4 characters is not a finding",
        'password: "abc"',
    ),
]

VALUES: list[tuple[str, str, Any]] = [
    (
        "field-password",
        "a password field's string value is a secret, whole",
        {"user": "ana", "password": "correct horse battery"},
    ),
    (
        "field-secret-access-key",
        "SecretAccessKey and SessionToken fields are secrets; the key id is found by its shape",
        {
            "Credentials": {
                "AccessKeyId": "ASIAIOSFODNN7EXAMPLE",
                "SecretAccessKey": "x/y+z" * 8,
                "SessionToken": "IQoJb3JpZ2luX2Vj" * 4,
            }
        },
    ),
    (
        "field-api-key-camel",
        "apiKey and clientSecret fields are secrets",
        {"apiKey": "k-123456", "clientSecret": "cs-9876"},
    ),
    (
        "field-not-string",
        "a password field that is not a string is not a finding",
        {"password": 12345678, "token": None},
    ),
    (
        "field-tokens-count",
        "a key that only contains the word (max_tokens) is not a secret field",
        {"max_tokens": "1024", "input_tokens": 5},
    ),
    (
        "key-is-secret",
        "a secret used as an object key is found, and masked in the pointer",
        {"sk-ant-api03-" + "Zq9x" * 20: {"a": 1}},
    ),
    (
        "integer-like-keys",
        "keys are walked in JCS order, so integer-like keys give the same order everywhere",
        {"10": "ghp_" + "a" * 36, "2": "xoxb-1234567890-abcdef", "b": {"password": "hunter22"}},
    ),
    (
        "nested-list",
        "secrets inside lists are found by index",
        {
            "content": [
                {"type": "text", "text": "sk_live_" + "d" * 24},
                {"type": "text", "text": "fine"},
            ]
        },
    ),
]

# a cloud service-account file as it sits on disk: the key body's newlines are backslash-n
KEY_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + "q1W2e3R4t5Y6" * 6
SERVICE_ACCOUNT = (
    '{"type": "service_account", "project_id": "demo", "private_key_id": "0a1b", '
    '"private_key": "-----BEGIN PRIVATE KEY-----\\n'
    + "\\n".join([KEY_BODY[:64], KEY_BODY[64:]])
    + '\\n-----END PRIVATE KEY-----\\n", "client_email": "x@demo.example"}'
)
DECODED_TEXTS: list[tuple[str, str, str]] = [
    (
        "service-account-key-in-text",
        "a private key whose newlines are backslash-n (a service-account file pasted in a "
        "message) is one secret, header to footer: its body never survives its header",
        "here is the file: " + SERVICE_ACCOUNT,
    ),
    (
        "service-account-key-double-escaped",
        "the same file held as a JSON string inside JSON text (escaped twice) is one secret",
        json.dumps({"result": SERVICE_ACCOUNT})[1:-1],
    ),
    (
        "private-key-base64",
        "a private key wrapped in base64 (a Kubernetes secret's data) is found; the whole run "
        "is the secret",
        "tls.key: "
        + base64.b64encode(
            (
                "-----BEGIN EC PRIVATE KEY-----\n" + KEY_BODY + "\n-----END EC PRIVATE KEY-----\n"
            ).encode()
        ).decode(),
    ),
    (
        "url-encoded-password",
        "a password in a URL-encoded form body is found through its decoded form",
        "grant_type=password&username=ann&password%3D%22hunter2hunter2%22&scope=all",
    ),
    (
        "redis-url-without-user",
        "a URL with a password and no user (redis://:password@host) hides the password",
        "REDIS_URL is redis://:s3cretRedisPass@cache.internal:6379/0",
    ),
    (
        "docker-config-json-text",
        "a Docker config.json auth field, read as text, is a secret",
        '{"auths": {"registry.example": {"auth": "dXNlcjpodW50ZXIyaHVudGVyMg=="}}}',
    ),
    (
        "npmrc-auth-token",
        "an .npmrc _authToken line is a secret whatever the token looks like",
        "registry=https://npm.example/\n//npm.example/:_authToken=0a1b2c3d-4e5f-6a7b\n",
    ),
    (
        "base64-of-ordinary-text",
        "a base64 run that decodes to text without a credential is not a finding",
        "data: " + base64.b64encode(b"hello world, nothing secret in here at all").decode(),
    ),
    (
        "base64-of-binary",
        "a base64 run that does not decode to UTF-8 text is not read as text",
        "blob: " + base64.b64encode(bytes(range(200, 256))).decode(),
    ),
    (
        "lone-surrogate-escape",
        "a lone surrogate escape stays as written; the rest of the text is still decoded",
        '\\ud800 then token=\\"abcdefgh12\\" and more',
    ),
]
DECODED_VALUES: list[tuple[str, str, Any]] = [
    (
        "service-account-key-as-key",
        "a backslash-n private key used as an object key: the whole key is the secret, and "
        "the pointer shows it whole as its placeholder",
        {SERVICE_ACCOUNT: {"a": 1}},
    ),
    (
        "key-segment-redacted-whole",
        "a key holding a secret is written whole as its placeholder in a pointer, also its "
        "unmatched rest",
        {"note ghp_" + "a" * 36 + " and the rest": {"inner": 'token="abcdefgh12"'}},
    ),
    (
        "docker-config-json-value",
        "the auth field of a Docker config.json is a secret (base64 of user:password)",
        {"auths": {"registry.example": {"auth": "dXNlcjpodW50ZXIy"}}, "auth": "oauth"},
    ),
]

BYTES: list[tuple[str, str, bytes]] = [
    (
        "bytes-utf16le",
        "an artifact in UTF-16LE (with a BOM) is scanned and redacted in UTF-16LE",
        ("\ufeffgithub: ghp_" + "a" * 36 + "\n").encode("utf-16-le"),
    ),
    (
        "bytes-utf16be",
        "an artifact in UTF-16BE is scanned and redacted in UTF-16BE",
        f"aws_secret_access_key={AWS_SECRET}".encode("utf-16-be"),
    ),
    (
        "bytes-latin1",
        "an artifact that is not UTF-8 is scanned byte by byte as Latin-1",
        b"caf\xe9 password = 'hunter22'\n",
    ),
    (
        "bytes-binary",
        "a binary artifact holding a key in its bytes is redacted in place",
        b"\x00\x01\x02\xffAKIAIOSFODNN7EXAMPLE\xfe\x00",
    ),
    (
        "bytes-utf8",
        "a UTF-8 artifact is scanned as text",
        'caf\u00e9 token="abcdefgh12"\n'.encode(),
    ),
    (
        "bytes-clean-binary",
        "random-looking bytes without a credential are left alone",
        bytes(range(256)),
    ),
]


DECODED_BYTES: list[tuple[str, str, bytes]] = [
    (
        "service-account-key-utf8",
        "a service-account file as a UTF-8 artifact: the key is redacted whole",
        SERVICE_ACCOUNT.encode(),
    ),
    (
        "service-account-key-latin1",
        "a service-account file in a Latin-1 artifact: the key is redacted whole",
        b"caf\xe9 " + SERVICE_ACCOUNT.encode(),
    ),
    (
        "service-account-key-utf16le",
        "a service-account file as a UTF-16LE artifact: the key is redacted whole",
        SERVICE_ACCOUNT.encode("utf-16-le"),
    ),
]


def _escaped(sample: str) -> str:
    """``sample`` as a JSON string's content, with ``/`` and ``-`` escaped too (``\\/``,
    ``\\u002d``: valid JSON escapes some writers use)."""
    return json.dumps(sample)[1:-1].replace("/", "\\/").replace("-", "\\u002d")


def _b64(sample: str, url: bool = False) -> str:
    if url:
        return base64.urlsafe_b64encode(sample.encode()).decode().rstrip("=")
    return base64.b64encode(sample.encode()).decode()


def placements(kind: str, sample: str) -> list[tuple[str, str, str, Any]]:
    """The sample of ``kind`` in every placement: ``(slug, description, form, input)``
    with form ``text``, ``value`` or ``bytes``."""
    lines = [
        f"plain: {sample}",
        f"json: {_escaped(sample)}",
        f"base64: {_b64(sample)}",
        f"base64url: {_b64(sample, url=True)}",
        f"url: {quote(sample, safe='')}",
    ]
    value = {
        "content": [{"type": "text", "text": f"see {sample}"}],
        "tool_result": json.dumps({"config": sample}),
        sample: {"a": 1},
    }
    slug = kind.replace("_", "-")
    return [
        (
            f"{slug}-in-text",
            f"{kind} as written, JSON-escaped, in base64, base64url and URL-encoded",
            "text",
            "\n".join(lines),
        ),
        (
            f"{slug}-in-value",
            f"{kind} in a message, in a JSON document held as a string, and as an object key",
            "value",
            value,
        ),
        (
            f"{slug}-in-utf16",
            f"{kind} as written and JSON-escaped in a UTF-16LE artifact",
            "bytes",
            ("\ufeff" + "\n".join(lines[:2])).encode("utf-16-le"),
        ),
        (
            f"{slug}-in-latin1",
            f"{kind} as written and in base64 in a Latin-1 artifact",
            "bytes",
            b"caf\xe9\n" + "\n".join([lines[0], lines[2]]).encode(),
        ),
    ]


def _doc(form: str, desc: str, given: Any) -> dict[str, Any]:
    """One test file: the input with the Python implementation's findings and redaction."""
    if form == "text":
        return {
            "description": desc,
            "text": given,
            "findings": kinds_in(given),
            "redacted": redact_text(given),
        }
    if form == "value":
        return {
            "description": desc,
            "value": given,
            "findings": [{"kind": k, "pointer": p} for k, p in find_in_value(given)],
            "redacted": redact_value(given),
        }
    return {
        "description": desc,
        "bytes_base64": base64.b64encode(given).decode(),
        "findings": [{"kind": k, "view": v} for v, k in scan_bytes(given)],
        "redacted_base64": base64.b64encode(redact_bytes(given)).decode(),
    }


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    tests: list[tuple[str, str, str, Any]] = [
        *(("text", *t) for t in TEXTS),
        *(("value", *t) for t in VALUES),
        *(("bytes", *t) for t in BYTES),
        *(("text", *t) for t in DECODED_TEXTS),
        *(("value", *t) for t in DECODED_VALUES),
        *(("bytes", *t) for t in DECODED_BYTES),
    ]
    for kind in sorted(SAMPLES):
        tests += [
            (form, slug, desc, given) for slug, desc, form, given in placements(kind, SAMPLES[kind])
        ]
    for n, (form, slug, desc, given) in enumerate(tests, 1):
        (OUT / f"{n:03d}-{slug}.json").write_bytes(canonical_document(_doc(form, desc, given)))
    print(f"{len(tests)} tests in {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
