"""Keen's own Python client (keen 0.7.0, unchanged) against `nohit serve`: it writes events (one,
a batch, an image beacon), then runs every analysis type with filters ("or" ones too), intervals,
group_by and funnels, saves queries (a cached one too) and reads their results, and checks each answer against a value computed here, independently, from the events it
sent. Arguments: base URL, project id, master, write and read keys. Exit status 0 when every check
holds; each check prints one line."""
import base64, datetime, json, math, re, statistics, sys, urllib.request
from zoneinfo import ZoneInfo

from keen.client import KeenClient
from keen import exceptions

base_url, project, master, write, read = sys.argv[1:6]
client = KeenClient(project_id=project, write_key=write, read_key=read, master_key=master, base_url=base_url)
failures = []


def check(name, got, want):
    ok = got == want
    if isinstance(want, float) and isinstance(got, (int, float)):
        ok = math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9)
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": got {got!r}, want {want!r}"))
    if not ok:
        failures.append(name)


UTC = datetime.timezone.utc
now = datetime.datetime.now(UTC)
start_day = (now - datetime.timedelta(days=3)).replace(hour=0, minute=0, second=0, microsecond=0)
cities = [(-87.6278, 41.8781), (-73.9855, 40.7580)]  # Chicago, New York (lon, lat)
categories = ["bat", "glove", "ball", "cap"]
purchases = []
for i in range(300):
    when = start_day + datetime.timedelta(minutes=30 + 13 * i)
    event = {
        "user": {"id": f"u{i % 37}", "tier": "gold" if i % 5 == 0 else "basic"},
        "price": (i * 7) % 50 + 0.5 * (i % 3),
        "category": categories[i % 4],
        "tags": ["sale"] if i % 6 == 0 else ["new"],
        "note": f"order {i} for team {'CHA' if i % 2 else 'NYA'}",
        "keen": {"location": {"coordinates": list(cities[i % 2])}},
    }
    if i % 10 == 0:
        event["coupon"] = "SPRING"
    purchases.append((when, event))

# One event alone, the rest in batches (the client posts them as one body per call).
first_when, first = purchases[0]
client.add_event("purchases", first, timestamp=first_when)
for chunk in range(1, 300, 100):
    batch = []
    for when, event in purchases[chunk:chunk + 100]:
        body = json.loads(json.dumps(event))
        body["keen"]["timestamp"] = when.isoformat()
        batch.append(body)
    client.add_events({"purchases": batch})
signups = [{"user": {"id": f"u{i}"}} for i in range(37)]
views = [{"user": {"id": f"u{i}"}, "page": "live" if i % 2 else "scores"} for i in range(0, 37, 2)]
checkouts = [{"user": {"id": f"u{i}"}} for i in range(0, 37, 3)]
client.add_events({"signups": signups, "views": views, "checkouts": checkouts})
# An image beacon, as generate_image_beacon makes it (0.7.0 calls .decode() on the write key: it
# takes bytes there).
beacon = KeenClient(project_id=project, write_key=write.encode(), base_url=base_url).generate_image_beacon("beacons", {"via": "gif", "n": 1})
with urllib.request.urlopen(beacon) as answer:
    check("image beacon answers a GIF", (answer.headers["Content-Type"], answer.read()[:6]), ("image/gif", b"GIF89a"))

# A batch with one bad event among good ones: each answered in its place, the bad one alone refused.
answer = client.api.post_events({"edge": [{"n": 1}, {"bad.name": 2}, {"n": 3}], "$edge": [{"n": 4}]})
check("a batch answers each event in its place",
      [[entry["success"] for entry in answer[c]] for c in ["edge", "$edge"]], [[True, False, True], [False]])
check("the bad event's error names Keen's error",
      (answer["edge"][1]["error"]["name"], answer["$edge"][0]["error"]["name"]),
      ("InvalidPropertyNameError", "InvalidCollectionNameError"))
# A repeat of a uniqueness token within 31 days is dropped; another token is not.
client.add_events({"edge": [{"n": 5, "keen": {"uniqueness_token": "insert-1"}},
                            {"n": 6, "keen": {"uniqueness_token": "insert-1"}},
                            {"n": 7, "keen": {"uniqueness_token": "insert-2"}}]})
client.add_event("edge", {"n": 8, "keen": {"uniqueness_token": "insert-1"}})
check("a repeated uniqueness_token is dropped", client.select_unique("edge", "n"), [1, 3, 5, 7])

events = [event | {"_when": when} for when, event in purchases]
window = {"start": start_day.isoformat(), "end": (start_day + datetime.timedelta(days=4)).isoformat()}


def lookup(event, path):
    value = event
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None, False
        value = value[part]
    return value, True


def miles(a, b):
    lon1, lat1, lon2, lat2 = map(math.radians, [a[0], a[1], b[0], b[1]])
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * 3958.8 * math.asin(min(1, math.sqrt(h)))


def passes(event, f):
    value, present = lookup(event, f["property_name"])
    op, operand = f["operator"], f["property_value"]
    if op == "exists":
        return present == operand
    if not present:
        return False
    if op == "eq":
        return operand in value if isinstance(value, list) else value == operand
    if op == "ne":
        return not (operand in value if isinstance(value, list) else value == operand)
    if op in ("lt", "lte", "gt", "gte"):
        if type(value) not in (int, float) or type(operand) not in (int, float):
            if not (isinstance(value, str) and isinstance(operand, str)):
                return False
        return {"lt": value < operand, "lte": value <= operand, "gt": value > operand, "gte": value >= operand}[op]
    if op == "in":
        return any(v in operand for v in value) if isinstance(value, list) else value in operand
    if op == "contains":
        return operand in value
    if op == "not_contains":
        return operand not in value
    if op == "regex":
        return isinstance(value, str) and re.search(operand, value) is not None
    if op == "within":
        return miles(value, operand["coordinates"]) <= operand["max_distance_miles"]
    raise ValueError(op)


def chosen(filters=()):
    return [e for e in events if all(passes(e, f) for f in filters)]


def percentile(values, p):
    values = sorted(values)
    rank = p / 100 * (len(values) - 1)
    low = int(math.floor(rank))
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (rank - low)


prices = [e["price"] for e in events]
check("count", client.count("purchases", timeframe=window), 300)
check("count, relative this_7_days", client.count("purchases", timeframe="this_7_days"), 300)
check("count_unique", client.count_unique("purchases", "user.id", timeframe=window), 37)
check("sum", client.sum("purchases", "price", timeframe=window), float(sum(prices)))
check("average", client.average("purchases", "price", timeframe=window), sum(prices) / len(prices))
check("minimum", client.minimum("purchases", "price", timeframe=window), float(min(prices)))
check("maximum", client.maximum("purchases", "price", timeframe=window), float(max(prices)))
check("median", client.median("purchases", "price", timeframe=window), float(statistics.median(prices)))
check("percentile 90", client.percentile("purchases", "price", 90, timeframe=window), percentile(prices, 90))
check("select_unique", client.select_unique("purchases", "category", timeframe=window), sorted(categories))

filters = [
    [{"property_name": "price", "operator": "gt", "property_value": 20}],
    [{"property_name": "price", "operator": "lte", "property_value": 10.5}],
    [{"property_name": "price", "operator": "gte", "property_value": 49}],
    [{"property_name": "price", "operator": "lt", "property_value": 1}],
    [{"property_name": "category", "operator": "eq", "property_value": "glove"}],
    [{"property_name": "category", "operator": "ne", "property_value": "glove"}],
    [{"property_name": "coupon", "operator": "exists", "property_value": True}],
    [{"property_name": "coupon", "operator": "exists", "property_value": False}],
    [{"property_name": "category", "operator": "in", "property_value": ["bat", "cap"]}],
    [{"property_name": "note", "operator": "contains", "property_value": "CHA"}],
    [{"property_name": "note", "operator": "not_contains", "property_value": "CHA"}],
    [{"property_name": "note", "operator": "regex", "property_value": "order [0-9]*7 "}],
    [{"property_name": "tags", "operator": "eq", "property_value": "sale"}],
    [{"property_name": "user.tier", "operator": "eq", "property_value": "gold"},
     {"property_name": "price", "operator": "gt", "property_value": 25}],
    [{"property_name": "keen.location.coordinates", "operator": "within",
      "property_value": {"coordinates": [-87.65, 41.85], "max_distance_miles": 10}}],
]
for f in filters:
    name = " and ".join(f"{x['property_name']} {x['operator']} {json.dumps(x['property_value'])}" for x in f)
    check(f"count where {name}", client.count("purchases", timeframe=window, filters=f), len(chosen(f)))
f = filters[0]
check("sum with a filter", client.sum("purchases", "price", timeframe=window, filters=f),
      float(sum(e["price"] for e in chosen(f))))

# group_by: one property, two properties, order_by and limit.
def grouped(keys, rows, value=len):
    groups = {}
    for e in rows:
        groups.setdefault(tuple(lookup(e, k)[0] for k in keys), []).append(e)
    return {k: value(v) for k, v in groups.items()}


got = client.count("purchases", timeframe=window, group_by="category")
check("count group_by category", {g["category"]: g["result"] for g in got},
      {k[0]: v for k, v in grouped(["category"], events).items()})
got = client.sum("purchases", "price", timeframe=window, group_by=["category", "user.tier"])
check("sum group_by category, user.tier", {(g["category"], g["user.tier"]): g["result"] for g in got},
      {k: float(v) for k, v in grouped(["category", "user.tier"], events, lambda r: sum(e["price"] for e in r)).items()})
got = client.count("purchases", timeframe=window, group_by="user.id",
                   order_by={"property_name": "result", "direction": "DESC"}, limit=3)
by_user = grouped(["user.id"], events)
check("count group_by user.id order_by result DESC limit 3", [g["result"] for g in got],
      sorted(by_user.values(), reverse=True)[:3])

# interval, in UTC and in New York's time (buckets at New York's midnights), with group_by.
got = client.count("purchases", timeframe=window, interval="daily")
want = [sum(1 for e in events if start_day + datetime.timedelta(days=d) <= e["_when"] < start_day + datetime.timedelta(days=d + 1)) for d in range(4)]
check("count daily", [b["value"] for b in got], want)
new_york = ZoneInfo("America/New_York")
ny_start = datetime.datetime.combine(start_day.astimezone(new_york).date(), datetime.time(), new_york)
ny_window = {"start": ny_start.isoformat(), "end": (ny_start + datetime.timedelta(days=4)).isoformat()}
got = client.count("purchases", timeframe=ny_window, timezone="America/New_York", interval="daily")
edges = [datetime.datetime.combine(ny_start.date() + datetime.timedelta(days=d), datetime.time(), new_york) for d in range(5)]
want = [sum(1 for e in events if edges[d] <= e["_when"] < edges[d + 1]) for d in range(4)]
check("count daily in America/New_York", [b["value"] for b in got], want)
check("interval starts at New York's midnight",
      datetime.datetime.fromisoformat(got[1]["timeframe"]["start"].replace("Z", "+00:00")), edges[1])
got = client.count("purchases", timeframe=window, interval="every_12_hours", group_by="category")
want = []
for h in range(8):
    lo, hi = start_day + datetime.timedelta(hours=12 * h), start_day + datetime.timedelta(hours=12 * h + 12)
    counts = grouped(["category"], [e for e in events if lo <= e["_when"] < hi])
    want.append({k[0]: v for k, v in counts.items()})
check("count every_12_hours group_by category", [{g["category"]: g["result"] for g in b["value"]} for b in got], want)

# multi_analysis.
got = client.multi_analysis("purchases", {"total": {"analysis_type": "sum", "target_property": "price"},
                                           "buyers": {"analysis_type": "count_unique", "target_property": "user.id"},
                                           "orders": {"analysis_type": "count"}}, timeframe=window)
check("multi_analysis", got, {"total": float(sum(prices)), "buyers": 37, "orders": 300})

# extraction: the latest 5, and chosen properties.
got = client.extraction("purchases", timeframe=window, latest=5, property_names=["price", "user.id"])
check("extraction latest 5", [(e["price"], e["user"]["id"]) for e in got],
      [(e["price"], e["user"]["id"]) for e in events[-5:]])
got = client.extraction("purchases", timeframe=window, filters=filters[4])
check("extraction with a filter", len(got), len(chosen(filters[4])))

# funnel: signups → views → checkouts, optional and inverted steps.
signed = {e["user"]["id"] for e in signups}
viewed = {e["user"]["id"] for e in views}
checked_out = {e["user"]["id"] for e in checkouts}
steps = [{"event_collection": "signups", "actor_property": "user.id", "timeframe": "this_2_days"},
         {"event_collection": "views", "actor_property": "user.id", "timeframe": "this_2_days"},
         {"event_collection": "checkouts", "actor_property": "user.id", "timeframe": "this_2_days"}]
check("funnel", client.funnel(steps), [len(signed), len(signed & viewed), len(signed & viewed & checked_out)])
steps[1]["optional"] = True
check("funnel with an optional step", client.funnel(steps),
      [len(signed), len(signed & viewed), len(signed & checked_out)])
steps[1]["optional"] = False
steps[2]["inverted"] = True
steps[1]["filters"] = [{"property_name": "page", "operator": "eq", "property_value": "live"}]
live = {e["user"]["id"] for e in views if e["page"] == "live"}
answer = client.funnel(steps, all_keys=True)
check("funnel with a filter and an inverted step", answer["result"],
      [len(signed), len(signed & live), len((signed & live) - checked_out)])

# Schema, keys, errors.
check("schema lists the collections", sorted(c["name"] for c in client.get_all_collections()),
      ["beacons", "checkouts", "edge", "purchases", "signups", "views"])
check("schema of a collection", client.get_collection("purchases")["properties"]["user.id"], "string")
try:
    KeenClient(project_id=project, write_key=read, read_key=read, base_url=base_url).add_event("x", {"a": 1})
    check("a read key cannot write", "accepted", "InvalidApiKeyError")
except exceptions.KeenApiError as error:
    check("a read key cannot write", error.args[0]["error_code"], "InvalidApiKeyError")
try:
    KeenClient(project_id=project, write_key=write, read_key=write, base_url=base_url).count("purchases")
    check("a write key cannot read", "answered", "InvalidApiKeyError")
except exceptions.KeenApiError as error:
    check("a write key cannot read", error.args[0]["error_code"], "InvalidApiKeyError")
try:
    KeenClient(project_id=project, write_key="0" * 64, read_key="0" * 64, base_url=base_url).count("purchases")
    check("an unknown key", "answered", "InvalidApiKeyError")
except exceptions.KeenApiError as error:
    check("an unknown key", error.args[0]["error_code"], "InvalidApiKeyError")
access = client.create_access_key("gold only", permitted=["queries"], options={
    "queries": {"filters": [{"property_name": "user.tier", "operator": "eq", "property_value": "gold"}]}})
scoped = KeenClient(project_id=project, read_key=access["key"], base_url=base_url)
check("an access key's filters apply", scoped.count("purchases", timeframe=window),
      len(chosen([{"property_name": "user.tier", "operator": "eq", "property_value": "gold"}])))
check("access keys are listed", [k["name"] for k in client.list_access_keys()], ["gold only"])
client.revoke_access_key(access["key"])
try:
    scoped.count("purchases", timeframe=window)
    check("a revoked key is refused", "answered", "InvalidApiKeyError")
except exceptions.KeenApiError as error:
    check("a revoked key is refused", error.args[0]["error_code"], "InvalidApiKeyError")

# standard_deviation (the sample deviation) and Keen's "or" filters, through the client's own calls.
check("standard_deviation", client.api.query("standard_deviation", {
    "event_collection": "purchases", "target_property": "price", "timeframe": json.dumps(window)}),
    statistics.stdev(prices))
either = [{"operator": "or", "operands": [
    {"property_name": "category", "operator": "eq", "property_value": "glove"},
    {"property_name": "user.tier", "operator": "eq", "property_value": "gold"}]}]
check("count with an or filter", client.count("purchases", timeframe=window, filters=either),
      len([e for e in events if any(passes(e, f) for f in either[0]["operands"])]))
with_metadata = client.api.query("count", {"event_collection": "purchases", "timeframe": json.dumps(window),
                                           "include_metadata": "true"}, all_keys=True)
check("include_metadata answers execution_metadata",
      (with_metadata["result"], sorted(with_metadata["execution_metadata"]),
       with_metadata["execution_metadata"]["events_scanned"]),
      (300, ["events_scanned", "properties_per_event", "total_processing_time", "total_properties_scanned"], 300))

# Saved queries: create, list, get, result, update, delete (client.saved_queries, unchanged).
saved = client.saved_queries
created = saved.create("gold-purchases", {"refresh_rate": 0, "query": {
    "analysis_type": "count", "event_collection": "purchases", "timeframe": window,
    "filters": [{"property_name": "user.tier", "operator": "eq", "property_value": "gold"}]},
    "metadata": {"display_name": "Gold purchases", "visualization": {"chart_type": "metric"}}})
check("a saved query is created with its name and URLs",
      (created["query_name"], created["urls"]["cached_query_results_url"], created["metadata"]["display_name"]),
      ("gold-purchases", f"/3.0/projects/{project}/queries/saved/gold-purchases/result", "Gold purchases"))
gold = len(chosen([{"property_name": "user.tier", "operator": "eq", "property_value": "gold"}]))
check("a saved query's result", saved.results("gold-purchases")["result"], gold)
saved.create("spread", {"query": {"analysis_type": "standard_deviation", "event_collection": "purchases",
                                  "target_property": "price", "timeframe": window}})
check("saved queries are listed", sorted(q["query_name"] for q in saved.all()), ["gold-purchases", "spread"])
check("a saved query is read back", saved.get("spread")["query"]["analysis_type"], "standard_deviation")
saved.update("gold-purchases", {"query": {"filters": [
    {"property_name": "category", "operator": "eq", "property_value": "glove"}]}})
check("an updated saved query answers its new definition", saved.results("gold-purchases")["result"],
      len(chosen(filters[4])))
check("an update keeps the metadata", saved.get("gold-purchases")["metadata"]["display_name"], "Gold purchases")
saved.delete("spread")
check("a deleted saved query is gone", [q["query_name"] for q in saved.all()], ["gold-purchases"])
try:
    saved.results("spread")
    check("a deleted saved query has no result", "answered", "ResourceNotFoundError")
except exceptions.KeenApiError as error:
    check("a deleted saved query has no result", error.args[0]["error_code"], "ResourceNotFoundError")
try:
    saved.create("bad-rate", {"refresh_rate": 60, "query": {"analysis_type": "count", "event_collection": "x"}})
    check("a refresh rate under 4 hours is refused", "accepted", "InvalidParameterError")
except exceptions.KeenApiError as error:
    check("a refresh rate under 4 hours is refused", error.args[0]["error_code"], "InvalidParameterError")
# A cached query: the first result is computed and kept; the next is answered from the cache.
saved.create("cached-count", {"refresh_rate": 14400, "query": {
    "analysis_type": "count", "event_collection": "purchases", "timeframe": window}})
first = saved.results("cached-count")
again = saved.results("cached-count")
check("a cached query is answered from its cache",
      (first["result"], again["result"], again["execution_metadata"].get("from_cache")), (300, 300, True))
check("a read key reads a saved query's result",
      KeenClient(project_id=project, read_key=read, base_url=base_url).saved_queries.results("gold-purchases")["result"],
      len(chosen(filters[4])))

# Cached datasets (client.cached_datasets, unchanged): a daily count indexed by the user's tier,
# answered per tier and day from its buckets.
datasets = client.cached_datasets
made = datasets.create("daily-by-tier", {"analysis_type": "count", "event_collection": "purchases",
                                         "timeframe": "this_5_days", "interval": "daily"},
                       "user.tier", "Purchases a day by tier")
check("a dataset is created", (made["dataset_name"], made["index_by"], made["status"]),
      ("daily-by-tier", ["user.tier"], "Created"))
check("datasets are listed", [d["dataset_name"] for d in datasets.all()["datasets"]], ["daily-by-tier"])
answer = datasets.results("daily-by-tier", "gold", "this_5_days")["result"]
def in_bucket(event, bucket):
    start = datetime.datetime.fromisoformat(bucket["timeframe"]["start"])
    end = datetime.datetime.fromisoformat(bucket["timeframe"]["end"])
    return start <= event["_when"] < end
gold_events = [e for e in events if e["user"]["tier"] == "gold"]
check("a dataset answers each day's count for an index value",
      [b["value"] for b in answer], [len([e for e in gold_events if in_bucket(e, b)]) for b in answer])
check("a dataset's days hold every event of that value", (len(answer), sum(b["value"] for b in answer)),
      (5, len(gold_events)))
check("a dataset by an index value given as JSON",
      [b["value"] for b in datasets.results("daily-by-tier", {"user.tier": "basic"}, "this_5_days")["result"]],
      [len([e for e in events if e["user"]["tier"] == "basic" and in_bucket(e, b)]) for b in answer])
check("a dataset once computed is OK", datasets.get("daily-by-tier")["status"], "OK")
try:
    datasets.results("daily-by-tier", "gold", "this_9_days")
    check("a timeframe past the dataset's is refused", "answered", "TimeframeDefinitionError")
except exceptions.KeenApiError as error:
    check("a timeframe past the dataset's is refused", error.args[0]["error_code"], "TimeframeDefinitionError")
datasets.delete("daily-by-tier")
check("a deleted dataset is gone", datasets.all()["datasets"], [])

# Delete with a filter (master key): the gloves go, the rest stay.
client.delete_events("purchases", filters=[{"property_name": "category", "operator": "eq", "property_value": "glove"}])
check("delete with a filter", client.count("purchases", timeframe=window), 300 - len(chosen(filters[4])))

print(f"keen client: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
