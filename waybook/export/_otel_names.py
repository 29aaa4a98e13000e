"""The GenAI semantic conventions' names, read from the installed `opentelemetry-semantic-conventions`.

The attribute names and the operation names are used by their constants, so the spans say exactly what
the installed release of the conventions says (docs/otel.md names the release this was built on). The
package is part of the `otel` extra; without it this import says which extra to install.
"""

from __future__ import annotations

try:
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai
    from opentelemetry.semconv._incubating.attributes.gen_ai_attributes import GenAiOperationNameValues
    from opentelemetry.semconv.attributes import error_attributes as error
except ModuleNotFoundError as missing:  # pragma: no cover - the default test run has the extra
    msg = (
        "waybook.export.otel needs the OpenTelemetry semantic conventions "
        f"(module {missing.name!r} is not installed): pip install 'waybook[otel]'"
    )
    raise ImportError(msg, name=missing.name) from missing

CHAT = GenAiOperationNameValues.CHAT.value
EXECUTE_TOOL = GenAiOperationNameValues.EXECUTE_TOOL.value
INVOKE_AGENT = GenAiOperationNameValues.INVOKE_AGENT.value

__all__ = ["CHAT", "EXECUTE_TOOL", "INVOKE_AGENT", "error", "gen_ai"]
