"""The query frontend: per-request limits, splitting into sub-queries, fair scheduling,
timeouts and cancellation, and merging the sub-results."""
