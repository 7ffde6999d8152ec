"""JUnit XML of a suite (spec/reports.md section 6): one testcase per case and
implementation, its detail text the terminal's (:func:`.suite.describe`), a repeated
result's statistics as ``<properties>``, every character XML 1.0 cannot hold escaped."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from ..run.runner import CaseResult, SuiteResult
from .matrix import TERMINAL_MARKS as MARKS
from .repeat_view import junit_properties
from .result_text import baseline_text, describe, stale_text


def junit_xml(suite: SuiteResult, name: str = "threads-cases") -> bytes:
    """JUnit XML: one testcase per case and implementation; fail -> failure, error -> error,
    skip -> skipped; drifted is a failure only under ``--strict``; xfail -> skipped with the
    message ``xfail: <reason> (<issue>)``; xpass -> failure of type ``xpass`` whose message
    names the stale entry and the command that removes it."""
    counts = suite.counts
    failures = counts["fail"] + counts["xpass"] + (counts["drifted"] if suite.strict else 0)
    root = ET.Element(
        "testsuites",
        name=name,
        tests=str(len(suite.results)),
        failures=str(failures),
        errors=str(counts["error"]),
        skipped=str(counts["skip"] + counts["xfail"]),
        time=f"{suite.duration_ms / 1000:.3f}",
    )
    by_impl: dict[str, list[CaseResult]] = {}
    for r in suite.results:
        by_impl.setdefault(r.implementation, []).append(r)
    for impl, results in by_impl.items():
        c = {v: sum(1 for r in results if r.verdict == v) for v in MARKS}
        ts = ET.SubElement(
            root,
            "testsuite",
            name=impl,
            tests=str(len(results)),
            failures=str(c["fail"] + c["xpass"] + (c["drifted"] if suite.strict else 0)),
            errors=str(c["error"]),
            skipped=str(c["skip"] + c["xfail"]),
            time=f"{sum(r.duration_ms for r in results) / 1000:.3f}",
        )
        for r in results:
            tc = ET.SubElement(
                ts,
                "testcase",
                classname=impl,
                name=r.case,
                file=r.path,
                time=f"{r.duration_ms / 1000:.3f}",
            )
            _properties(tc, r)
            text = describe(r)
            if r.verdict == "fail" or (r.verdict == "drifted" and suite.strict):
                ET.SubElement(
                    tc, "failure", type=",".join(r.reasons), message=", ".join(r.reasons)
                ).text = text
            elif r.verdict == "error":
                ET.SubElement(
                    tc, "error", type=",".join(r.reasons), message=r.message or ", ".join(r.reasons)
                ).text = text
            elif r.verdict == "skip":
                ET.SubElement(tc, "skipped", message=r.message or ", ".join(r.reasons))
            elif r.verdict == "xfail":
                ET.SubElement(tc, "skipped", type="xfail", message=baseline_text(r)).text = text
            elif r.verdict == "xpass":
                ET.SubElement(tc, "failure", type="xpass", message=stale_text(r)).text = text
            elif r.verdict == "drifted":
                ET.SubElement(tc, "system-out").text = text
    for el in root.iter():
        el.text = xml_safe(el.text) if el.text else el.text
        for key, value in el.attrib.items():
            el.attrib[key] = xml_safe(value)
    ET.indent(root)
    return bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True)) + b"\n"


def _properties(tc: ET.Element, r: CaseResult) -> None:
    """A repeated result's ``<properties>`` (pass count, rate, Wilson 95% interval, flips,
    pass^N: :func:`.repeat_view.junit_properties`), first in its testcase."""
    pairs = junit_properties(r)
    if pairs:
        holder = ET.SubElement(tc, "properties")
        for name, value in pairs:
            ET.SubElement(holder, "property", name=name, value=value)


#: Characters XML 1.0 cannot hold at all (not even as character references): C0 controls
#: other than tab, LF and CR, lone surrogates, U+FFFE and U+FFFF.
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 cannot hold written as a ``\\xNN`` /
    ``\\uNNNN`` escape (a driver's stderr with ``\\x1b`` colour codes stays readable and the
    file stays XML)."""
    return _XML_ILLEGAL.sub(
        lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text
    )
