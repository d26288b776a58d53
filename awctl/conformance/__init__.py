"""The domain conformance kit: the rules every domain (built-in or a third party's) must pass.

``awctl domains check NAME`` runs it from the command line; a plugin's own CI runs it from pytest::

    from awctl.conformance import check_domain

    def test_my_domain_conforms():
        report = check_domain(MyDomain())
        assert report.ok, report.text()

Rules (each reported by name with a message an author can act on):

- ``codec.round_trip``: every recorded action and observation renders back byte for byte.
- ``codec.generated_input``: on generated text, a codec either raises ``CodecError`` or round-trips.
- ``judge.perfect_reference``: a recorded observation, stripped as the judge strips a prediction, scores
  5/5 on every dimension through the deterministic judge (each row answered with its own turn).
- ``verifier.fails_garbage``: every verifier that passes on a recorded observation fails (not abstains)
  on random text in its place, so garbage earns no verifier credit.
- ``verifier.catches_fault``: every verifier has a planted fault (``Domain.faults()``) and catches it on
  at least 3 of 4 recorded turns where it applies.
- ``task.reference_passes``: every task's reference solution passes its checker in the real environment.
- ``task.noop_fails``: doing nothing fails every task's checker.
- ``prompt.variants``: the prompt builder gives at least 10 distinct wordings.
- ``env.reset_reproducible``: resetting the real environment with a seed twice gives the same first
  observation.
- ``env.first_observation``: a simulated episode starts from what the real reset shows:
  ``Domain.first_observation`` undoes what ``sections_for`` wrapped around the reset text.

Recordings come from the caller (``recordings=``) and, when the domain has a real environment, from
running its tasks' reference solutions now. A rule that cannot run (no real environment, no recordings)
is reported as skipped with the reason, never as passed.
"""

from __future__ import annotations

from awctl.conformance.kit import RULES, ConformanceReport, RuleOutcome, check_domain

__all__ = ["RULES", "ConformanceReport", "RuleOutcome", "check_domain"]
