"""schemathesis hooks for No-Hitter Alerts' OpenAPI document (.ci/schemathesis loads them through
$SCHEMATHESIS_HOOKS): strategies for the two string formats a pattern cannot say all of.

- `p256-public-key`: a Web Push subscription's key must be a point on the P-256 curve, which no
  regular expression can check: these are real public keys (made with `cryptography`, their
  private halves thrown away).
  The coverage phase draws from the pattern alone, so a `before_call` hook also puts a real key
  in place of any key that matches the pattern (a schema-valid value) but is not one of these;
  values that break the pattern are left alone, so negative cases stay negative.
- `public-https-url`: an https URL whose host is a public name, as the registrar takes it without
  the operator's leave for private networks.
- Quiet hours' start and end must differ (the document says so in words; JSON Schema cannot compare
  two fields): `before_call` moves an end equal to its start on by a minute. Both stay times of the
  pattern, so a case stays as valid or invalid as it was.
"""
import re

import schemathesis
from hypothesis import strategies as st

P256_PUBLIC_KEYS = [
    "BNp9tvoWP9Ep1t6LuX_qYptn6h2qRR-2xY98YMPWOGKASUZvDPEnqRd2MhmsMs2_DDv_w81LmHLii-LYA1FIGHc",
    "BF6esqCkHqjHg6BtxAWYoJ4q4OAe5Y7ZQLbqK6NBk5pqIRZWVLFs5B1rqcqkZHwzpZFGOwgi_68p056waEZoxMA",
    "BI9yEwuFQzAflzvqamkFf1glZRklpz_J4HSPf9jzTekR8YiO2IDIEvO69tUgXHV3faLVMCZt-9bBqQgNXY8G5SQ",
    "BBj1CXJy2VgDRuPQxR952Aw2P5MoJYCTzGQbLt__6BeaZruZuO85umF-Yrn7lY32kyDS7Q4cbUdS4A3WPWh6UQg",
    "BNO-1nFJP-3fGZUauNLFH3rnn1JecBFfGX6bHEtTOoQeU9eZyZrkr6qF11JyeZ5liRgHuLJUsCRNYBgZgJOhd8E",
    "BNxyCR1anDRYSCjxGzcaGrwI-bx6IKhRi4HkLQ0WTivUNXyXP0Zz9eABNvb0EB_whQPrHxVIKK-8IFBKDgz2gUQ",
    "BKRc2z_9TAbV8kp-kbeE5WpShjERTj4v7AHGrpYatu8MwaQ0vhcxtC3XiQT7fBReOy6m_bRKyG88ranaL2k2vZU",
    "BH_Ep5NCsBqHrJ8oTguR1zwhmUMjMxhNMsgGe2uARc_omEJj4YdpBVO-Ttcgq-bs71te1yzAngRqnj-3LKatFJw",
]

label = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,14}[a-z0-9])?", fullmatch=True)
host = st.builds(
    lambda labels, tld: ".".join(labels + [tld]),
    st.lists(label, min_size=1, max_size=3),
    st.sampled_from(["com", "net", "org", "io", "dev", "example"]),
)
port = st.one_of(st.just(""), st.integers(min_value=1, max_value=65535).map(lambda number: f":{number}"))
path = st.from_regex(r"(/[A-Za-z0-9._~-]{0,12}){0,4}", fullmatch=True)
query = st.one_of(st.just(""), st.from_regex(r"\?[A-Za-z0-9=&._~-]{0,20}", fullmatch=True))

schemathesis.openapi.format("p256-public-key", st.sampled_from(P256_PUBLIC_KEYS))
schemathesis.openapi.format(
    "public-https-url",
    st.builds(lambda name, number, rest, tail: f"https://{name}{number}{rest}{tail}", host, port, path, query),
)

P256_PATTERN = re.compile(r"B[A-P][A-Za-z0-9_-]{85}=?")


TIME_PATTERN = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]")


def distinct_quiet_hours(preferences):
    quiet = preferences.get("quiet_hours") if isinstance(preferences, dict) else None
    if not isinstance(quiet, dict):
        return
    start, end = quiet.get("start"), quiet.get("end")
    if isinstance(start, str) and start == end and TIME_PATTERN.fullmatch(end):
        minutes = (int(end[:2]) * 60 + int(end[3:]) + 1) % 1440
        quiet["end"] = f"{minutes // 60:02d}:{minutes % 60:02d}"


@schemathesis.hook
def before_call(context, case, kwargs):
    body = case.body
    if isinstance(body, dict):
        distinct_quiet_hours(body)
        distinct_quiet_hours(body.get("preferences"))
    if case.operation.path != "/api/devices" or not isinstance(body, dict) or body.get("channel") != "web-push":
        return
    key = body.get("p256dh")
    if isinstance(key, str) and P256_PATTERN.fullmatch(key) and key.rstrip("=") not in P256_PUBLIC_KEYS:
        real = P256_PUBLIC_KEYS[sum(key.encode()) % len(P256_PUBLIC_KEYS)]
        body["p256dh"] = real + ("=" if key.endswith("=") else "")
