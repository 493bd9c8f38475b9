"""Per-tenant limits: the overrides lookup, ingestion limiters, query limits and the
discarded-data counters (LIMITS.md)."""
