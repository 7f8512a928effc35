"""Prepared statements per client through pgbouncer in transaction mode, for
test/tap/pgbouncer.pl: psycopg 3 with prepare_threshold=None works on every
pgbouncer; named server-side prepared statements (prepare_threshold=0) work
from pgbouncer 1.21 on with max_prepared_statements and fail before it.

    BOUNCER='host=... port=...' NAMED_OK=0|1 python3 -m pytest test_pgbouncer.py
"""
import os
import threading

import psycopg

BOUNCER = os.environ["BOUNCER"] + " dbname=app"
NAMED_OK = os.environ["NAMED_OK"] == "1"


def writer(prepare_threshold, errors, n=60):
    try:
        with psycopg.connect(BOUNCER, autocommit=True, prepare_threshold=prepare_threshold) as conn:
            for _ in range(n):
                conn.execute("INSERT INTO shard_0001.photos (caption) VALUES (%s)", (f"psycopg {prepare_threshold}",))
    except psycopg.Error as e:
        errors.append(e)


def run(prepare_threshold):
    """6 clients, 60 inserts each, over pgbouncer's 2 server connections."""
    errors = []
    threads = [threading.Thread(target=writer, args=(prepare_threshold, errors)) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_unnamed_statements():
    errors = run(None)
    assert not errors, errors
    print("psycopg prepare_threshold=None: 360 inserts from 6 clients over 2 server connections")


def test_named_statements():
    errors = run(0)  # prepare every statement: named server-side prepared statements
    if NAMED_OK:
        assert not errors, errors
        print("psycopg named prepared statements work with max_prepared_statements (pgbouncer >= 1.21)")
    else:
        states = sorted({e.sqlstate for e in errors})
        assert errors and set(states) <= {"26000", "42P05"}, (states, errors)
        print(f"psycopg named prepared statements fail before pgbouncer 1.21"
              f" ({len(errors)} of 6 clients: {', '.join(states)})")
