"""The client side of bench/routing: routed INSERT and lookup by ID through
the shard map (clients/python/shardid_router.py), through PL/Proxy on the
router, and straight to the node, from one Python process (psycopg 3), the
paths interleaved in every repetition. Per call it measures the wall time
and the CPU time of everything involved: this process plus every process
of the three servers (from /proc; the data directories come as arguments),
which a machine busy with other work disturbs far less than the wall time.
Prints one JSON line per measurement.

    routing.py ROUTER NODES_JSON CALLS REPS DATA_DIR...
"""
import json
import os
import statistics
import sys
import time

import psycopg

from shardid_router import ShardMap

router, nodes, calls, reps = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
postmasters = [int(open(os.path.join(d, "postmaster.pid")).readline()) for d in sys.argv[5:]]
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds():
    """CPU time (user + system) of this process and of every server process."""
    total = time.process_time()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(pid) in postmasters or int(fields[1]) in postmasters:  # fields[1]: the parent pid
            total += (int(fields[11]) + int(fields[12])) / TICK  # utime, stime
    return total

m = ShardMap(router, nodes, pool_max_size=2)
SHARDS = [3, 10]  # one on each node
direct = {n: psycopg.connect(c) for n, c in nodes.items()}                     # a transaction per call
direct_auto = {n: psycopg.connect(c, autocommit=True) for n, c in nodes.items()}  # one statement per call
proxy = psycopg.connect(router, autocommit=True)
ids = {p: [] for p in ("map", "plproxy", "direct", "direct_autocommit")}


def insert_sql(shard):
    return f"INSERT INTO {m.schema_for_shard(shard)}.posts (user_id, body) VALUES (%s, 'bench') RETURNING id"


def lookup_sql(id):
    return f"SELECT body FROM {m.schema_for_shard(m.shard_of(id))}.posts WHERE id = %s"


def insert(path, i):
    shard = SHARDS[i % 2]
    if path == "map":
        return m.run(shard, lambda c: c.execute(insert_sql(shard), (shard,)).fetchone()[0])
    if path == "plproxy":
        return proxy.execute("SELECT public.insert_post(%s, 'bench')", (shard,)).fetchone()[0]
    node = m.node_for_shard(shard)
    if path == "direct":
        conn = direct[node]
        id = conn.execute(insert_sql(shard), (shard,)).fetchone()[0]
        conn.commit()
        return id
    return direct_auto[node].execute(insert_sql(shard), (shard,)).fetchone()[0]


def lookup(path, id):
    if path == "map":
        return m.run(m.shard_of(id), lambda c: c.execute(lookup_sql(id), (id,)).fetchone())
    if path == "plproxy":
        return proxy.execute("SELECT body FROM public.get_post(%s)", (id,)).fetchone()
    node = m.node_for_id(id)
    if path == "direct":
        conn = direct[node]
        row = conn.execute(lookup_sql(id), (id,)).fetchone()
        conn.commit()
        return row
    return direct_auto[node].execute(lookup_sql(id), (id,)).fetchone()


paths = list(ids)
samples = {(op, p): [] for op in ("insert", "lookup") for p in paths}
cpu = {(op, p): [] for op in ("insert", "lookup") for p in paths}
for p in paths:  # warm up: pools, plans, PL/Proxy's cluster cache
    for i in range(200):
        ids[p].append(insert(p, i))
        assert lookup(p, ids[p][-1]) == ("bench",)
for rep in range(reps):
    order = paths[rep % len(paths):] + paths[:rep % len(paths)]
    for p in order:
        c, t = cpu_seconds(), time.perf_counter()
        new = [insert(p, i) for i in range(calls)]
        samples[("insert", p)].append((time.perf_counter() - t) / calls * 1e6)
        cpu[("insert", p)].append((cpu_seconds() - c) / calls * 1e6)
        ids[p] += new
    for p in order:
        some = ids[p][-calls:]
        c, t = cpu_seconds(), time.perf_counter()
        for id in some:
            if lookup(p, id) is None:
                sys.exit(f"{p}: lookup of {id} found nothing")
        samples[("lookup", p)].append((time.perf_counter() - t) / calls * 1e6)
        cpu[("lookup", p)].append((cpu_seconds() - c) / calls * 1e6)
for (op, p), us in samples.items():
    c = cpu[(op, p)]
    print(json.dumps({"op": op, "path": p, "median_us": round(statistics.median(us), 1),
                      "min_us": round(min(us), 1), "max_us": round(max(us), 1),
                      "cpu_median_us": round(statistics.median(c), 1), "cpu_min_us": round(min(c), 1),
                      "cpu_max_us": round(max(c), 1),
                      "samples_us": [round(x, 1) for x in us], "cpu_samples_us": [round(x, 1) for x in c]}))
m.close()
