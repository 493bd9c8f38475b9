"""Differential-style corpora: a few hundred real-looking lines per format, mined as one
stream, with the answer the reference's pattern ingester gives for them.

Each expected pattern was derived by hand from the reference's rules (pkg/pattern): the
format of the stream's first line picks the tokenizer; lines go to the miner of their
level; a line is routed by its token count, then by its leading tokens (a token with a
digit takes the <_> branch, other tokens a branch of their own), and joins the cluster
at its leaf sharing at least 30% of its tokens, differing positions becoming <_>; the
querier keeps patterns of at least 30 lines, most lines first. The comments name the rule
behind each pattern. Ties in line count come back in no fixed order from the reference;
here they are sorted by pattern text.
"""

from __future__ import annotations

import json
from collections import Counter

from svc.config import LimitsConfig, PatternIngesterConfig
from svc.query.pattern_series import MIN_TOTAL
from svc.query.pattern_tokens import detect_formats
from svc.query.patterns import MiningSettings, mine_stream

S = 1_000_000_000
SETTINGS = MiningSettings.from_config(PatternIngesterConfig(), LimitsConfig())


def _answer(lines: list[str]) -> list[tuple[str, str, int]]:
    """The querier's answer for one stream holding ``lines`` (one per second)."""
    entries = [(i * S, line, ()) for i, line in enumerate(lines)]
    (fmt,) = detect_formats([lines[0]])
    totals: Counter[tuple[str, str]] = Counter()
    for pattern, level, times in mine_stream((), entries, fmt, SETTINGS):
        totals[(pattern, level)] += len(times)
    kept = [(p, lvl, n) for (p, lvl), n in totals.items() if n >= MIN_TOTAL]
    return sorted(kept, key=lambda found: (-found[2], found[0], found[1]))


def _interleave(groups: list[list[str]]) -> list[str]:
    """Lines of all groups, taken in turn while they last."""
    out: list[str] = []
    longest = max(len(g) for g in groups)
    for index in range(longest):
        out += [g[index] for g in groups if index < len(g)]
    return out


def _nginx_line(i: int, method: str, path: str, status: int, size: int, agent: str) -> str:
    ip = f"10.0.{i % 4}.{i % 7 + 1}"
    date = f"12/Mar/2025:10:{i // 60 % 60:02d}:{i % 60:02d}"
    return f'{ip} - - [{date} +0000] "{method} {path} HTTP/1.1" {status} {size} "-" "{agent}"'


FIREFOX = "Mozilla/5.0 (X11; Linux x86_64) Firefox/121.0"


def test_nginx_access_log() -> None:
    g1 = [
        _nginx_line(
            i,
            "GET",
            f"/api/v1/orders/{1000 + i}",
            404 if i % 3 == 0 else 200,
            500 + i,
            "curl/8.4.0",
        )
        for i in range(90)
    ]
    g2 = [
        _nginx_line(i + 1, "GET", f"/api/v1/orders/{2000 + i}", 200, 700 + i, "kube-probe/1.29")
        for i in range(40)
    ]
    g3 = [
        _nginx_line(i + 2, "POST", "/login", 401 if i % 4 == 0 else 302, 120 + i % 9, FIREFOX)
        for i in range(60)
    ]
    g4 = [_nginx_line(i + 3, "GET", "/healthz", 200, 2, "kube-probe/1.29") for i in range(50)]
    g5 = [
        _nginx_line(i + 4, "GET", "/static/app.js", 304 if i % 2 else 200, 48_000 + i, FIREFOX)
        for i in range(45)
    ]
    g6 = [_nginx_line(i + 5, "POST", "/logout", 200, 10, "curl/8.4.0") for i in range(20)]
    g7 = [
        _nginx_line(i + 6, "GET", "/metrics", 200, 9000 + i, "Prometheus/2.51.0") for i in range(35)
    ]
    lines = _interleave([g4, g1, g2, g3, g5, g6, g7])
    assert len(lines) == 340
    assert _answer(lines) == [
        # g1, g2 and g7 have 20 tokens each. The IP, date, +0000, HTTP/1.1, status, size
        # and agent tokens hold digits (<_> branch); the words between are equal. g1's
        # path holds digits: its first line creates the <_> branch after GET. "/metrics"
        # then finds no child of its own and the search goes on through <_>, to g1's
        # leaf, where g1, g2 and g7 lines share 14 of 20 tokens (0.7 >= 0.3): one cluster,
        # with the IP, date, path, status, size and agent as <_>.
        ('<_> - - [<_> +0000] "GET <_> HTTP/1.1" <_> <_> "-" "<_>"', "unknown", 165),
        # Firefox's agent makes 27 tokens: a tree of its own. POST and GET differ at a
        # routed word (token 9), so g3 and g5 are apart; "/login" has no digit either.
        (
            '<_> - - [<_> +0000] "POST /login HTTP/1.1" <_> <_> "-" "' + FIREFOX + '"',
            "unknown",
            60,
        ),
        # g4 comes first: "/healthz" (no digit) gets a child of its own before the <_>
        # branch exists, and its lines find it by name. Status, size and agent never
        # vary, so they stay.
        ('<_> - - [<_> +0000] "GET /healthz HTTP/1.1" 200 2 "-" "kube-probe/1.29"', "unknown", 50),
        (
            '<_> - - [<_> +0000] "GET /static/app.js HTTP/1.1" <_> <_> "-" "' + FIREFOX + '"',
            "unknown",
            45,
        ),
        # g6 (POST /logout) is a cluster of 20 lines: under 30, the querier drops it.
    ]


def test_key_value_ticker() -> None:
    lines = [
        f"ts=2025-03-12T10:{i // 60:02d}:{i % 60:02d}Z ticker={pair} price={100 + i * 0.25:.2f} seq={i}"
        for i in range(300)
        for pair in (("BTC-USD", "ETH-USD")[i % 2],)
    ]
    # The first line is logfmt: tokens are keys and values. "ts" is a time key, so its
    # value is <_> from the start. The value "BTC-USD"/"ETH-USD" (token 4) holds no digit
    # and is routed by itself: two clusters. Price and sequence vary: <_>.
    assert _answer(lines) == [
        ("ts=<_> ticker=BTC-USD price=<_> seq=<_>", "unknown", 150),
        ("ts=<_> ticker=ETH-USD price=<_> seq=<_>", "unknown", 150),
    ]


def _json_line(i: int, level: str, **fields: str) -> str:
    document = {"ts": f"2025-03-12T10:00:{i % 60:02d}Z", "level": level, **fields}
    document["caller"] = f"http.go:{100 + i % 37}"
    return json.dumps(document)


def test_json_lines() -> None:
    served = [_json_line(i, "info", msg=f"request served in {i % 50 + 1}ms") for i in range(80)]
    users = [
        _json_line(i, "info", msg=f"user {('alice', 'bob', 'carol')[i % 3]} logged in")
        for i in range(90)
    ]
    retry_warn = [
        _json_line(i, "warn", msg=f"retrying upstream call attempt {i % 5}") for i in range(40)
    ]
    retry_error = [
        _json_line(i, "error", msg=f"retrying upstream call attempt {i % 5}") for i in range(35)
    ]
    quoted = [
        _json_line(i, "info", msg=f'GET "/api/items" returned {(200, 500)[i % 2]}')
        for i in range(30)
    ]
    heartbeat = [_json_line(i, "info", event="heartbeat") for i in range(20)]
    short = [_json_line(i, "info", msg="ok") for i in range(10)]
    lines = _interleave([served, users, retry_warn, retry_error, quoted, heartbeat, short])
    assert len(lines) == 305
    assert _answer(lines) == [
        # The JSON tokenizer mines the "msg" text between two <_> for the rest of the
        # object; "5ms" varies, and the trailing "<_><_>" collapses into one.
        ("<_>request served in <_>", "info", 80),
        # Levels come from the "level" member; each level has its own miner, so the same
        # text makes two series.
        ("<_>retrying upstream call attempt <_>", "warn", 40),
        ("<_>retrying upstream call attempt <_>", "error", 35),
        # The message as written keeps its escapes: \ and " are tokens of their own.
        ('<_>GET \\"/api/items\\" returned <_>', "info", 30),
        # The user name (token 2) holds no digit: one cluster per name, 30 lines each.
        ("<_>user alice logged in<_>", "info", 30),
        ("<_>user bob logged in<_>", "info", 30),
        ("<_>user carol logged in<_>", "info", 30),
        # No "msg" (heartbeat): not mined. "ok" is one token, under 4: not mined.
    ]


def _logfmt_line(i: int, caller: str, level: str, msg: str) -> str:
    msg = f'"{msg}"' if " " in msg else msg
    return (
        f"ts=2025-03-12T10:00:{i % 60:02d}.{i % 1000:03d}Z caller={caller}:{i % 90 + 10} "
        f"level={level} msg={msg} duration={i % 700 + 1}ms user=u{i % 13}"
    )


def test_logfmt_lines() -> None:
    flushing = [_logfmt_line(i, "flush.go", "info", "flushing chunk") for i in range(90)]
    query = [_logfmt_line(i, "query.go", "debug", "query done") for i in range(60)]
    compacted = [
        _logfmt_line(i, "compactor.go", "info", f"compacted {i % 9 + 2} tables") for i in range(50)
    ]
    uploaded = [
        _logfmt_line(i, "upload.go", "info", f"uploaded {i % 4 + 1} files") for i in range(30)
    ]
    broken = [f'ts=2025-03-12T10:00:{i:02d}Z level=info msg="unterminated' for i in range(15)]
    slow = [_logfmt_line(i, "db.go", "warn", "slow query") for i in range(25)]
    lines = _interleave([flushing, query, compacted, uploaded, broken, slow])
    assert len(lines) == 270
    assert _answer(lines) == [
        # Twelve tokens (six pairs). "ts" is a time key (<_>); the caller, duration and
        # user values hold digits; "flushing chunk" does not and is routed by itself.
        ('ts=<_> caller=<_> level=info msg="flushing chunk" duration=<_> user=<_>', "info", 90),
        # "compacted 5 tables" and "uploaded 3 files" are single tokens holding digits:
        # both take the <_> branch, meet at one leaf and share 7 of 12 tokens (0.58):
        # one cluster, the message a <_>.
        ("ts=<_> caller=<_> level=info msg=<_> duration=<_> user=<_>", "info", 80),
        ('ts=<_> caller=<_> level=debug msg="query done" duration=<_> user=<_>', "debug", 60),
        # The unterminated quote makes lines logfmt cannot read: not mined. The 25 warn
        # lines make a pattern under 30 lines.
    ]


def test_java_stack_traces_and_mixed_text() -> None:
    errors = [
        f"2025-03-12 10:{i // 60:02d}:{i % 60:02d}.{i * 7 % 1000:03d} ERROR [main] "
        f"c.e.OrderService - Failed to process order {5000 + i}"
        for i in range(60)
    ]
    exceptions = [
        f"java.lang.IllegalStateException: order {5000 + i} is already closed" for i in range(60)
    ]
    frames = [
        f"\tat com.example.OrderService.process(OrderService.java:{40 + i % 5})" for i in range(60)
    ]
    handlers = [f"\tat com.example.Handler.handle(Handler.java:{70 + i % 3})" for i in range(60)]
    more = [f"\t... {i % 20 + 3} more" for i in range(30)]
    indented = [
        f"  at io.netty.Channel.read(Channel.java:{i % 8 + 1}) via pipeline" for i in range(35)
    ]
    retries = [
        f"2025-03-12 10:{i // 60:02d}:{i % 60:02d}.{i * 3 % 1000:03d} WARN [pool-{i % 3 + 1}] "
        f"c.e.Retry - retry {i % 4 + 1} of 5"
        for i in range(35)
    ]
    lines = _interleave([errors, exceptions, frames, handlers, more, indented, retries])
    assert len(lines) == 340
    assert _answer(lines) == [
        # A tab is no separator: "\tat" is one token. The frame's second token holds no
        # digit, so each method is routed apart; the file:line token becomes <_>.
        ("\tat com.example.Handler.handle(<_>)", "unknown", 60),
        ("\tat com.example.OrderService.process(<_>)", "unknown", 60),
        # "ERROR" stands alone between spaces: level error. The date never changes, the
        # time does; "-", ":" and "." do not split, so each is one token.
        ("2025-03-12 <_> ERROR [main] c.e.OrderService - Failed to process order <_>", "error", 60),
        # ":" does not split: "java.lang.IllegalStateException:" is one token.
        ("java.lang.IllegalStateException: order <_> is already closed", "unknown", 60),
        # "WARN" gives the level; the thread name holds a digit and varies.
        ("2025-03-12 <_> WARN [<_>] c.e.Retry - retry <_> of 5", "warn", 35),
        # A line opening with a space records it before any token, which (as in the
        # reference) keeps every space out of the pattern.
        ("atio.netty.Channel.read(<_>)viapipeline", "unknown", 35),
        # "\t... 3 more" is three tokens: not mined.
    ]
