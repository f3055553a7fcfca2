"""The analytics benchmark's reference: DuckDB (PyPI `duckdb`, in process, one thread) on the same
events (`nohit-bench analytics --reference duckdb` writes them as CSV from the same generator) and
the same seven queries, as SQL. Prints one JSON line per query: its median and every run's wall
time in ms, the CPU time per run, and its answer in the form the benchmark compares with ours.

usage: duckdb_reference.py EVENTS_CSV RUNS START_US END_US
"""
import json, statistics, sys, time

import duckdb

path, runs, start, end = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
connection = duckdb.connect()
connection.execute("SET threads = 1")
load = time.perf_counter()
connection.execute(f"""CREATE TABLE views AS SELECT * FROM read_csv('{path}', header = true, columns = {{
    'ts': 'BIGINT', 'id_hash': 'VARCHAR', 'name': 'VARCHAR', 'duration_ms': 'DOUBLE', 'os_version': 'VARCHAR',
    'logged_in': 'BOOLEAN'}})""")
print(json.dumps({"duckdb": duckdb.__version__, "rows": connection.execute("SELECT count(*) FROM views").fetchone()[0],
                  "load_s": round(time.perf_counter() - load, 2)}), flush=True)

window = f"ts >= {start} AND ts < {end}"
# Daily buckets as Keen's intervals divide an absolute timeframe here (docs/analytics.md): a day at a
# time from its start, in America/New_York (all of October 2026 is EDT, so each is 24 hours).
day = f"(ts - {start}) // 86400000000"
sliced = f"{window} AND logged_in"
step = lambda name: f"SELECT DISTINCT id_hash FROM views WHERE {window} AND name = '{name}' AND os_version >= '17'"
QUERIES = [
    ("count", f"SELECT count(*) FROM views WHERE {window}", lambda rows: rows[0][0]),
    ("count_unique", f"SELECT count(DISTINCT id_hash) FROM views WHERE {window}", lambda rows: rows[0][0]),
    ("median", f"SELECT quantile_cont(duration_ms, 0.5) FROM views WHERE {window}", lambda rows: rows[0][0]),
    ("funnel", f"""WITH s1 AS ({step('live')}), s2 AS ({step('game')}), s3 AS ({step('settings')})
        SELECT (SELECT count(*) FROM s1), (SELECT count(*) FROM s1 JOIN s2 USING (id_hash)),
               (SELECT count(*) FROM s1 JOIN s2 USING (id_hash) JOIN s3 USING (id_hash))""",
     lambda rows: list(rows[0])),
    ("count, filtered, group_by, daily", f"SELECT {day} AS d, name, count(*) FROM views WHERE {sliced} GROUP BY d, name",
     lambda rows: {"cells": len(rows), "total": sum(r[2] for r in rows)}),
    ("count_unique, filtered, group_by, daily",
     f"SELECT {day} AS d, name, count(DISTINCT id_hash) FROM views WHERE {sliced} GROUP BY d, name",
     lambda rows: {"cells": len(rows), "total": sum(r[2] for r in rows)}),
    ("median, filtered, group_by, daily",
     f"SELECT {day} AS d, name, quantile_cont(duration_ms, 0.5) FROM views WHERE {sliced} GROUP BY d, name",
     lambda rows: {"cells": len(rows), "total": round(sum(r[2] for r in rows), 3)}),
]
for name, sql, answer in QUERIES:
    times, cpu = [], []
    for _ in range(runs):
        wall, used = time.perf_counter(), time.process_time()
        rows = connection.execute(sql).fetchall()
        times.append((time.perf_counter() - wall) * 1000)
        cpu.append((time.process_time() - used) * 1000)
    print(json.dumps({"name": name, "median_ms": statistics.median(times), "runs_ms": times,
                      "cpu_ms": statistics.median(cpu), "answer": answer(rows)}), flush=True)
