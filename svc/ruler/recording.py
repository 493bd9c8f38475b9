"""Recording rules: each sample of the result becomes a series named by ``record``.

Labels are the result's with ``__name__`` set to the record name, then the rule's labels
over them (Prometheus' recording rule, RULER.md 7.1).
"""

from __future__ import annotations

from svc.ruler.alerting import OutputSample
from svc.ruler.evaluation import EvaluationError, Sample, labels_key
from svc.ruler.rulefmt import Rule

__all__ = ["RecordingRule"]

DUPLICATE_SERIES = "vector contains metrics with the same labelset after applying rule labels"


class RecordingRule:
    """A ``record:`` rule."""

    kind = "recording"

    def __init__(self, rule: Rule) -> None:
        self.rule = rule

    @property
    def name(self) -> str:
        """The record (metric) name."""
        return self.rule.record

    def evaluate(self, samples: list[Sample], ts_ns: int, limit: int) -> list[OutputSample]:
        """The series of one evaluation; raises on duplicates or an exceeded ``limit``."""
        ms = ts_ns // 1_000_000
        out: dict[tuple[tuple[str, str], ...], OutputSample] = {}
        for sample in samples:
            labels = dict(sample.labels)
            labels["__name__"] = self.name
            labels.update(self.rule.labels)
            # an empty value removes the label, as Prometheus' label builder does
            key = labels_key({name: value for name, value in labels.items() if value})
            if key in out:
                raise EvaluationError(DUPLICATE_SERIES)
            out[key] = OutputSample(key, ms, sample.value)
        if 0 < limit < len(out):
            raise EvaluationError(f"exceeded limit of {limit} with {len(out)} series")
        return list(out.values())
