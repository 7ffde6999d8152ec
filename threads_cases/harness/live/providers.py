"""Provider clients for live runs (spec/replay.md 11.3): the common shape, and choosing one.

A provider turns a case's model request ``{model, system, messages, tools}`` into its own API
call, makes it with the official SDK (imported only here, only for ``--live``), and turns the
answer back into a reply ``{message, stop_reason, usage}``. One module per provider holds the
conversion: :mod:`.anthropic_api` (Messages API) and :mod:`.openai_api` (Chat Completions).

Credentials come from the SDKs' standard environment variables (``ANTHROPIC_API_KEY``,
``OPENAI_API_KEY``); the key is handed to nothing else, and no message this module builds
holds it: a failed call is described by its HTTP status and the SDK's error *type* only,
never by the provider's error text (which may quote the key). Retries are the SDK's own
(``max_retries``, with ``retry-after``); ``timeout`` is seconds per attempt.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

from ...core.errors import CaseError

PROVIDERS = ("anthropic", "openai")
#: provider -> (API key variable, base URL variable, default base URL)
ENVIRONMENT = {
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
    "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL", "https://api.openai.com/v1"),
}
INSTALL_HINT = "pip install 'threads-cases[live]' (the official anthropic and openai SDKs)"


@dataclass(frozen=True)
class ProviderAnswer:
    """A provider's reply in the case's shape, whether it reported usage (its counts as
    reported, checked by :func:`.spend.usage_problem`), and the model the answer names
    (None when it names none)."""

    reply: dict[str, Any]
    usage_reported: bool
    model: str | None = None


class ProviderError(Exception):
    """A call that failed after the SDK's retries; ``str()`` is a neutral one-line reason
    (status and error type), safe to log. ``cost_known`` is True when the provider answered
    with an HTTP error status (nothing is charged for it); False when the call got no
    readable answer (a timeout, a lost connection, a body that is not a reply), whose cost
    is unknown (spec/replay.md 11.4)."""

    def __init__(self, message: str, cost_known: bool = False) -> None:
        super().__init__(message)
        self.cost_known = cost_known


class Provider(Protocol):
    name: str
    #: the hosts a call may reach: the base URL's, and a proxy's (:func:`reachable_hosts`)
    hosts: tuple[str, ...]

    def call(self, request: dict[str, Any]) -> ProviderAnswer: ...


@dataclass(frozen=True)
class ClientSettings:
    """How to reach the provider: ``base_url`` (None: ``<PROVIDER>_BASE_URL``, else the
    default), ``timeout`` seconds per attempt, ``max_retries`` (the SDK's retries),
    ``max_tokens`` per reply."""

    provider: str = "anthropic"
    base_url: str | None = None
    timeout: float = 600.0
    max_retries: int = 2
    max_tokens: int = 4096

    def url(self) -> str:
        _key, var, default = ENVIRONMENT[self.provider]
        return self.base_url or os.environ.get(var) or default

    def api_key(self) -> str:
        """The key from the provider's variable. Raises ``CaseError("live_unavailable")``
        when it is not set (naming the variable, never a value)."""
        var = ENVIRONMENT[self.provider][0]
        key = os.environ.get(var, "")
        if not key:
            raise CaseError(
                "live_unavailable",
                f"--live --provider {self.provider} needs the API key in {var}",
                hint=f"export {var}=... (it is read from the environment only, never saved)",
            )
        return key


def host_of(url: str) -> str:
    """The host name of a base URL. Raises ``CaseError("invalid_request")`` for a URL
    without one."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CaseError(
            "invalid_request",
            f"--base-url {url!r} is not an http(s) URL with a host",
            hint="for example --base-url http://127.0.0.1:8080",
        )
    return parts.hostname


def reachable_hosts(url: str) -> tuple[str, ...]:
    """The hosts a call to ``url`` may reach: its own, and the proxy the environment routes
    it through (``HTTPS_PROXY`` / ``HTTP_PROXY``, unless ``NO_PROXY`` exempts the host), as
    the SDKs' HTTP client does."""
    import urllib.request

    host = host_of(url)
    scheme = urlsplit(url).scheme
    proxy = urllib.request.getproxies().get(scheme)
    if proxy and not urllib.request.proxy_bypass(host):
        proxy_host = urlsplit(proxy if "://" in proxy else f"http://{proxy}").hostname
        if proxy_host:
            return (host, proxy_host)
    return (host,)


def open_provider(settings: ClientSettings) -> Provider:
    """The provider client for ``settings`` (its SDK imported now). Raises
    ``CaseError("live_unavailable")`` when the SDK is not installed or the key is not set,
    ``invalid_request`` for an unknown provider or a bad base URL."""
    if settings.provider not in PROVIDERS:
        raise CaseError(
            "invalid_request",
            f"--provider must be one of {', '.join(PROVIDERS)}",
        )
    hosts = reachable_hosts(settings.url())
    key = settings.api_key()
    try:
        if settings.provider == "anthropic":
            from .anthropic_api import AnthropicProvider

            return AnthropicProvider(settings, key, hosts)
        from .openai_api import OpenAIProvider

        return OpenAIProvider(settings, key, hosts)
    except ImportError:
        raise CaseError(
            "live_unavailable",
            f"the {settings.provider} SDK is not installed",
            hint=INSTALL_HINT,
        ) from None


def provider_error(exc: BaseException) -> ProviderError:
    """The :class:`ProviderError` for an SDK error: :func:`status_text`, its cost known when
    the provider answered with a status."""
    return ProviderError(status_text(exc), isinstance(getattr(exc, "status_code", None), int))


def status_text(exc: BaseException) -> str:
    """A neutral description of an SDK error: its HTTP status when it has one, and the
    error's type name (never its text, which may quote the provider's answer)."""
    status = getattr(exc, "status_code", None)
    kind = type(exc).__name__
    if isinstance(status, int):
        return f"the provider answered HTTP {status} ({kind})"
    return f"the call failed ({kind})"
