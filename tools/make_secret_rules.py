"""Write spec/secrets/rules.json, the credential rules both implementations load.

The rules are data (spec/case-format.md, "Secrets"); this script only spells them readably.
Patterns use the regular-expression subset that Python's ``re`` and ECMAScript (with the
``u`` flag) read alike: ASCII literals and classes, ``[^...]``, ``{m,n}``, ``*``, ``+``,
``?``, non-capturing and numbered groups, lookahead and fixed-width lookbehind. No ``\\b``,
``\\s``, ``\\w``, ``\\d``, ``.``, anchors or flags: case-insensitive words are spelled
``[Pp][Aa]...``. Run ``python tools/make_secret_rules.py`` after editing.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from threads_cases.core.canonical import canonical_document  # noqa: E402

OUT = ROOT / "spec" / "secrets" / "rules.json"


def ci(word: str) -> str:
    """``word`` matched without regard to ASCII case: ``ab_`` -> ``[Aa][Bb]_``."""
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else c for c in word)


B = "(?<![A-Za-z0-9_])"  # no word character before
E = "(?![A-Za-z0-9_])"  # no word character after
# a label's separator: an optional (escaped) quote, ':' or '=' with blanks, an optional quote
SEP = "\\\\?[\"']?[ \\t]*[:=][ \\t]*\\\\?[\"']?"
# a quoted value: the label's separator ends in a quote, the value stops at the next one
QUOTED = "\\\\?[\"']([^\"'\\r\\n\\\\]{4,256})\\\\?[\"']"
SEP_BARE = "\\\\?[\"']?[ \\t]*[:=][ \\t]*"
PASSWORD = "(?:" + "|".join(ci(w) for w in ("password", "passwd", "passphrase")) + ")"
SECRET = (
    "(?:"
    + "|".join(
        ci(w).replace("_", "[_-]?")
        for w in ("client_secret", "secret", "api_key", "apikey", "access_key", "private_key")
    )
    + ")"
)

AWS_KEY_PREFIXES = "AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA"

TEXT_RULES: list[tuple[str, str, int]] = [
    (
        "private_key",
        "-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        "(?:[A-Za-z0-9+/=\\r\\n\\t :,.]|-(?!----END))*"
        "(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----)?",
        0,
    ),
    ("anthropic_api_key", B + "sk-ant-[A-Za-z0-9_-]{20,}", 0),
    ("openai_api_key", B + "sk-(?:proj-|svcacct-|admin-)?(?!ant-)[A-Za-z0-9_-]{32,}", 0),
    (
        "aws_access_key_id",
        "(?<![A-Z0-9])(?:" + AWS_KEY_PREFIXES + ")[0-9A-Z]{16}(?![A-Z0-9])",
        0,
    ),
    (
        "aws_secret_access_key",
        "(?:"
        + ci("aws")
        + "_?)?"
        + ci("secret")
        + "_?"
        + ci("access")
        + "_?"
        + ci("key")
        + SEP
        + "([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
        1,
    ),
    (
        "aws_session_token",
        "(?:"
        + ci("aws")
        + "_?)?"
        + ci("session")
        + "_?"
        + ci("token")
        + SEP
        + "([A-Za-z0-9/+=]{100,})",
        1,
    ),
    ("azure_storage_account_key", "AccountKey=([A-Za-z0-9+/]{20,}={0,2})", 1),
    ("azure_sas_signature", "[?&]sig=([A-Za-z0-9%+/]{20,}(?:%3[Dd]|=){0,2})", 1),
    ("github_token", B + "gh[pousr]_[A-Za-z0-9]{36,}", 0),
    ("github_fine_grained_token", B + "github_pat_[A-Za-z0-9_]{22,}", 0),
    ("gitlab_token", B + "glpat-[A-Za-z0-9_-]{20,}", 0),
    ("google_api_key", B + "AIza[0-9A-Za-z_-]{35}", 0),
    ("google_oauth_token", B + "ya29\\.[0-9A-Za-z_-]{20,}", 0),
    ("google_client_secret", B + "GOCSPX-[A-Za-z0-9_-]{28}", 0),
    ("slack_token", B + "xox[abprse]-[A-Za-z0-9-]{10,}", 0),
    (
        "slack_webhook_url",
        "https://hooks\\.slack\\.com/services/(T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+)",
        1,
    ),
    ("stripe_key", B + "(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", 0),
    ("huggingface_token", B + "hf_[A-Za-z0-9]{30,}", 0),
    ("npm_token", B + "npm_[A-Za-z0-9]{36}" + E, 0),
    ("pypi_token", B + "pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}", 0),
    ("jwt", B + "eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}", 0),
    ("bearer_token", "(?<![A-Za-z])" + ci("bearer") + "[ \\t]+([A-Za-z0-9._~+/-]{20,}=*)", 1),
    (
        "basic_auth_header",
        ci("authorization")
        + SEP_BARE
        + "\\\\?[\"']?"
        + ci("basic")
        + "[ \\t]+([A-Za-z0-9+/]{8,}={0,2})",
        1,
    ),
    (
        "url_credentials",
        "(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^ \\t\\r\\n/:@\"'<>\\\\]*:"
        "([^ \\t\\r\\n/@\"'<>\\\\]{3,})@",
        1,
    ),
    ("sendgrid_api_key", B + "SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}", 0),
    ("twilio_api_key", B + "SK[0-9a-fA-F]{32}" + E, 0),
    ("mailgun_api_key", B + "key-[0-9a-f]{32}" + E, 0),
    ("digitalocean_token", B + "do[opr]_v1_[a-f0-9]{64}", 0),
    ("shopify_token", B + "shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", 0),
    ("databricks_token", B + "dapi[a-f0-9]{32}" + E, 0),
    ("telegram_bot_token", "(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_-]{33}" + E, 0),
    ("square_token", B + "sq0(?:atp|csp)-[A-Za-z0-9_-]{22,43}", 0),
    ("linear_api_key", B + "lin_api_[A-Za-z0-9]{40}", 0),
    ("age_secret_key", "AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", 0),
    # kinds from public rule collections (gitleaks' list, as facts: prefixes and lengths)
    (
        "discord_bot_token",
        # the lookbehind after the first letter: the engine skips to an M, N or O
        "[MNO](?<![A-Za-z0-9_][MNO])[A-Za-z0-9]{23,25}\\.[A-Za-z0-9_-]{6}\\.[A-Za-z0-9_-]{27,38}"
        + E,
        0,
    ),
    ("atlassian_api_token", B + "ATATT3[A-Za-z0-9_=-]{186}", 0),
    (
        "heroku_api_key",
        ci("heroku")
        + "[A-Za-z0-9_ .-]{0,20}"
        + SEP
        + "([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})",
        1,
    ),
    ("heroku_platform_key", B + "HRKU-AA[0-9A-Za-z_-]{58}", 0),
    (
        "docker_config_auth",
        '"auth"[ \\t]*:[ \\t]*"([A-Za-z0-9+/]{8,}={0,2})"',
        1,
    ),
    (
        "npmrc_auth",
        "(?<![A-Za-z0-9])_(?:authToken|auth|password)[ \\t]*=[ \\t]*([^ \\t\\r\\n\"']{4,256})",
        1,
    ),
    ("alibaba_access_key_id", B + "LTAI[A-Za-z0-9]{20}" + E, 0),
    ("clojars_api_token", B + "CLOJARS_[A-Za-z0-9]{60}" + E, 0),
    ("doppler_api_token", B + "dp\\.pt\\.[A-Za-z0-9]{43}", 0),
    ("duffel_api_token", B + "duffel_(?:test|live)_[A-Za-z0-9_=-]{43}", 0),
    ("dynatrace_api_token", B + "dt0c01\\.[A-Za-z0-9]{24}\\.[A-Za-z0-9]{64}", 0),
    ("easypost_api_token", B + "EZAK[A-Za-z0-9]{54}", 0),
    ("flutterwave_secret_key", B + "FLWSECK(?:_TEST)?-[a-hA-H0-9]{32}-X", 0),
    ("grafana_cloud_api_token", B + "glc_[A-Za-z0-9+/]{32,400}={0,2}", 0),
    ("grafana_service_account_token", B + "glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", 0),
    ("terraform_cloud_token", B + "[A-Za-z0-9]{14}\\.atlasv1\\.[A-Za-z0-9_=-]{60,70}", 0),
    ("vault_token", B + "hv[sb]\\.[A-Za-z0-9_-]{90,}", 0),
    ("new_relic_api_key", B + "NRAK-[A-Z0-9]{27}" + E, 0),
    ("planetscale_token", B + "pscale_(?:pw|tkn|oauth)_[A-Za-z0-9=._-]{32,64}", 0),
    ("postman_api_token", B + "PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}", 0),
    ("pulumi_access_token", B + "pul-[a-f0-9]{40}" + E, 0),
    ("rubygems_api_token", B + "rubygems_[a-f0-9]{48}" + E, 0),
    ("sentry_token", B + "sntry[su]_[A-Za-z0-9+/=_]{40,}", 0),
    ("shippo_api_token", B + "shippo_(?:live|test)_[a-fA-F0-9]{40}", 0),
    ("slack_app_token", B + "xapp-[0-9]-[A-Z0-9]+-[0-9]+-[a-z0-9]+", 0),
    ("stripe_webhook_secret", B + "whsec_[A-Za-z0-9]{32,}", 0),
    ("groq_api_key", B + "gsk_[A-Za-z0-9]{52}" + E, 0),
    ("perplexity_api_key", B + "pplx-[A-Za-z0-9]{48}" + E, 0),
    (
        "azure_ad_client_secret",
        "(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
        0,
    ),
    (
        "gitlab_other_token",
        B + "gl(?:ptt|dt|rt|cbt|imt|oas|ft|soat)-[A-Za-z0-9_-]{20,}",
        0,
    ),
    ("jfrog_api_key", B + "AKCp[A-Za-z0-9]{69}" + E, 0),
    ("langsmith_api_key", B + "lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}" + E, 0),
    (
        "connection_string_password",
        "(?<=[;\"' \\t\\r\\n])" + ci("password") + "=([^;\"'\\r\\n]{4,256})(?=;)",
        1,
    ),
    ("password", PASSWORD + SEP_BARE + QUOTED, 1),
    ("secret", SECRET + SEP_BARE + QUOTED, 1),
    ("token", ci("token") + SEP_BARE + "\\\\?[\"']([^\"'\\r\\n\\\\]{8,256})\\\\?[\"']", 1),
    (
        "env_secret",
        "(?<![A-Za-z0-9])[A-Z0-9_]*(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|API_KEY|APIKEY)"
        "=([^ \\t\\r\\n\"'$&;]{4,256})",
        1,
    ),
]

#: Each text rule's keywords: lower-case strings of which every match holds at least one
#: (compared with the text lower-cased), so a rule is skipped on a text holding none of
#: them (the result is the same; a 4 MB tool result is scanned in milliseconds, not
#: seconds). tests/test_secrets.py checks them against matches generated from each pattern.
KEYWORDS: dict[str, list[str]] = {
    "private_key": ["private key"],
    "anthropic_api_key": ["sk-ant-"],
    "openai_api_key": ["sk-"],
    "aws_access_key_id": AWS_KEY_PREFIXES.lower().split("|"),
    "aws_secret_access_key": ["secret"],
    "aws_session_token": ["session"],
    "azure_storage_account_key": ["accountkey="],
    "azure_sas_signature": ["sig="],
    "github_token": ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
    "github_fine_grained_token": ["github_pat_"],
    "gitlab_token": ["glpat-"],
    "google_api_key": ["aiza"],
    "google_oauth_token": ["ya29."],
    "google_client_secret": ["gocspx-"],
    "slack_token": ["xox"],
    "slack_webhook_url": ["https://hooks.slack.com/services/"],
    "stripe_key": ["_live_", "_test_"],
    "huggingface_token": ["hf_"],
    "npm_token": ["npm_"],
    "pypi_token": ["pypi-"],
    "jwt": ["eyj"],
    "bearer_token": ["bearer"],
    "basic_auth_header": ["authorization"],
    "url_credentials": ["://"],
    "sendgrid_api_key": ["sg."],
    "twilio_api_key": ["sk"],
    "mailgun_api_key": ["key-"],
    "digitalocean_token": ["_v1_"],
    "shopify_token": ["shp"],
    "databricks_token": ["dapi"],
    "telegram_bot_token": [":aa"],
    "square_token": ["sq0"],
    "linear_api_key": ["lin_api_"],
    "age_secret_key": ["age-secret-key-1"],
    "discord_bot_token": ["."],
    "atlassian_api_token": ["atatt3"],
    "heroku_api_key": ["heroku"],
    "heroku_platform_key": ["hrku-aa"],
    "docker_config_auth": ['"auth"'],
    "npmrc_auth": ["_auth", "_password"],
    "alibaba_access_key_id": ["ltai"],
    "clojars_api_token": ["clojars_"],
    "doppler_api_token": ["dp.pt."],
    "duffel_api_token": ["duffel_"],
    "dynatrace_api_token": ["dt0c01."],
    "easypost_api_token": ["ezak"],
    "flutterwave_secret_key": ["flwseck"],
    "grafana_cloud_api_token": ["glc_"],
    "grafana_service_account_token": ["glsa_"],
    "terraform_cloud_token": [".atlasv1."],
    "vault_token": ["hvs.", "hvb."],
    "new_relic_api_key": ["nrak-"],
    "planetscale_token": ["pscale_"],
    "postman_api_token": ["pmak-"],
    "pulumi_access_token": ["pul-"],
    "rubygems_api_token": ["rubygems_"],
    "sentry_token": ["sntry"],
    "shippo_api_token": ["shippo_"],
    "slack_app_token": ["xapp-"],
    "stripe_webhook_secret": ["whsec_"],
    "groq_api_key": ["gsk_"],
    "perplexity_api_key": ["pplx-"],
    "azure_ad_client_secret": ["q~"],
    "gitlab_other_token": [
        "glptt-",
        "gldt-",
        "glrt-",
        "glcbt-",
        "glimt-",
        "gloas-",
        "glft-",
        "glsoat-",
    ],
    "jfrog_api_key": ["akcp"],
    "langsmith_api_key": ["lsv2_"],
    "connection_string_password": ["password="],
    "password": ["password", "passwd", "passphrase"],
    "secret": ["secret", "api", "access", "private"],
    "token": ["token"],
    "env_secret": ["password", "passwd", "passphrase", "secret", "token", "api_key", "apikey"],
}

# an object key (the whole key) whose string value is a secret
FIELD_PREFIX = "[A-Za-z0-9_.-]*"
#: field rules whose value must also match a pattern (as a whole): a Docker config.json
#: "auth" is base64 of user:password, where an "auth" key elsewhere often names a method
VALUE_PATTERNS = {"docker_config_auth": "[A-Za-z0-9+/]{8,}={0,2}"}
FIELD_RULES: list[tuple[str, str, int]] = [
    ("docker_config_auth", "auth", 8),
    (
        "password",
        FIELD_PREFIX
        + "(?:"
        + "|".join(ci(w) for w in ("password", "passwd", "passphrase", "pwd"))
        + ")",
        4,
    ),
    (
        "secret",
        FIELD_PREFIX
        + "(?:"
        + "|".join(
            ci(w).replace("_", "[_-]?")
            for w in (
                "secret",
                "secret_key",
                "access_key",
                "account_key",
                "private_key",
                "credential",
                "credentials",
            )
        )
        + ")",
        4,
    ),
    ("token", FIELD_PREFIX + ci("token"), 4),
    ("api_key", FIELD_PREFIX + "(?:" + ci("api_key").replace("_", "[_-]?") + ")", 4),
    ("authorization", FIELD_PREFIX + ci("authorization"), 4),
]

# rules that apply only to a text in which the named kind was found
PAIR_RULES: list[tuple[str, str, str]] = [
    (
        "aws_access_key_id",
        "aws_secret_access_key",
        "(?<![A-Za-z0-9/+=])(?=[A-Za-z0-9/+]{0,39}[A-Z])(?=[A-Za-z0-9/+]{0,39}[a-z])"
        "(?=[A-Za-z0-9/+]{0,39}[0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
    ),
]


def main() -> None:
    doc = {
        "format": 1,
        "description": "Credential rules of spec/case-format.md, section Secrets. Patterns are "
        "in the common subset of Python re and ECMAScript regular expressions (u flag).",
        "placeholder": {"prefix": "[REDACTED:", "hex_digits": 16, "suffix": "]"},
        "placeholder_pattern": "\\[REDACTED:(?:[0-9a-f]{16}|[a-z_]+:[0-9a-f]{8})\\]",
        "text_rules": [
            {"kind": k, "pattern": p, "group": g, "keywords": KEYWORDS[k]} for k, p, g in TEXT_RULES
        ],
        "field_rules": [
            {"kind": k, "key_pattern": p, "min_length": n}
            | ({"value_pattern": VALUE_PATTERNS[k]} if k in VALUE_PATTERNS else {})
            for k, p, n in FIELD_RULES
        ],
        # decoded forms (case-format.md 10.2): base64 runs this long or longer are decoded;
        # a decoded form is decoded again, up to this many times
        "decoding": {"base64_min_length": 20, "max_depth": 3},
        "pair_rules": [{"when": w, "kind": k, "pattern": p} for w, k, p in PAIR_RULES],
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(canonical_document(doc))
    kinds = {r["kind"] for r in doc["text_rules"]} | {r["kind"] for r in doc["field_rules"]}
    print(f"{len(kinds)} kinds, {len(TEXT_RULES)} text rules -> {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
