"""Named faults a simulator can be asked to inject into search-tool outputs.

Each one is phrased as an instruction added to the simulation instruction of the turns it applies to,
and names the exact text the faulty output takes, so a perturbed episode stays parseable where the real
fault would be (``Error: ...`` lines) and deliberately malformed only for ``malformed_output``.
"""

from __future__ import annotations

from awctl.domain import Perturbation

PERTURBATIONS: tuple[Perturbation, ...] = (
    Perturbation(
        "rate_limit",
        "the search API refuses the call with HTTP 429",
        "For this call the search service is rate limited: reply exactly "
        "'Error: 429 Too Many Requests: rate limit exceeded, retry after {retry_after} seconds' and nothing else.",
        {"retry_after": 30},
    ),
    Perturbation(
        "empty_results",
        "web_search finds nothing for every query",
        "For this web_search call every query finds nothing: write each query block as the tool writes an empty "
        "result list ('Results: 0', 'No results found.' or the no-results text of the tool's layout) and no results.",
    ),
    Perturbation(
        "timeout",
        "the tool call times out",
        "This call times out: reply exactly 'Error: request timed out after {seconds} seconds' and nothing else.",
        {"seconds": 30},
    ),
    Perturbation(
        "stale_page",
        "web_extractor finds the page gone (404) although search listed it",
        "The page requested by this web_extractor call no longer exists: reply exactly "
        "'Error: 404 Not Found: <the requested URL>'.",
    ),
    Perturbation(
        "truncated_page",
        "web_extractor returns only the start of the page",
        "The page download for this web_extractor call is cut off: keep the page's header lines as the tool "
        "writes them, then only the first {chars} characters of the page body, ending with the line '[truncated]'.",
        {"chars": 500},
    ),
    Perturbation(
        "malformed_output",
        "the tool returns garbled output that breaks its usual format",
        "The tool misbehaves on this call: return its output with the format broken — {defect}.",
        {"defect": "drop the snippet of one result and renumber nothing"},
    ),
)
