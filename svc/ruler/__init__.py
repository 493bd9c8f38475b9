"""The ruler: rule groups per tenant, evaluated as LogQL instant queries on their interval.

Alerting rules notify Alertmanager; recording rules are sent by Prometheus remote write.
Modules, each with one job:

    config         the ``ruler:`` block and its start-up checks
    rulefmt        rule group model, YAML decoding and the reference's YAML layout
    validation     semantic checks of rule groups (the reference's messages)
    store          rule storage: the interface and the writable local directory
    templates      Prometheus template functions; label/annotation expansion
    evaluation     one rule expression as an instant query, as a vector
    alerting       alerting rules: the alert state machine
    recording      recording rules
    group          a group's evaluation: rules in order, stale markers, health
    forstate       pending/firing state kept on disk, restored after a restart
    manager        per-tenant groups, polling the store, scheduling, bounded concurrency
    notifier       Alertmanager API v2 client with its queue
    remote_write   Prometheus remote write: on-disk buffer per tenant, sender, retries
    relabel        Prometheus relabelling of alerts and remote-written series
    metrics        the ruler's Prometheus metrics
"""
