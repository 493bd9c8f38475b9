"""Go compatibility: the behaviour of Go's standard library (and the template functions of
Loki and sprig) that answers must reproduce byte for byte, in one pure package.

Nothing here does I/O or knows LogQL, SQL or HTTP; ``logql_to_sql`` and ``svc`` build on it.

| module          | Go                                                              |
|-----------------|-----------------------------------------------------------------|
| ``strconv``     | ``strconv``: quoting, unquoting, number parsing and formatting  |
| ``fmt``         | quoting and float formatting entry points (``%q``, ``%v``)      |
| ``durations``   | ``time.ParseDuration``/``String``, Prometheus durations, humanize bytes |
| ``jsonesc``     | ``encoding/json`` string escaping                               |
| ``regex_syntax``| ``regexp/syntax`` checking with Go's error messages              |
| ``regex``       | ``regexp`` replace-all and count for templates                  |
| ``template``    | ``text/template`` with Loki's and sprig's functions             |
| ``logfmt``      | Loki's logfmt decoder and go-logfmt's encoder, a pair at a time |
| ``jsonparser``  | buger/jsonparser's lenient lookups (``Get``, ``ObjectEach``)     |
"""
