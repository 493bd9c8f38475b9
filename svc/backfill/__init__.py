"""``svc backfill``: logs of any age, from files or uploads, straight into the lake."""
