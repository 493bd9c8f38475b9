"""The query scheduler: a fair per-tenant queue (with actor-path sub-queues) and the query
worker threads that take from it."""
