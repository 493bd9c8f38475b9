"""Query statements executed on Ray actors (``querier.execution: ray``)."""
