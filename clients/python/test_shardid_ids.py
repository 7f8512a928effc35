"""Tests of shardid_ids: fixed vectors, and (with SHARDID_FIXTURE set to a JSON
file written by test/tap/clients.pl) IDs and codes made by a real server.

    python3 -m pytest test_shardid_ids.py     (or: python3 -m unittest -v test_shardid_ids)
"""

import json
import os
import time
import unittest
from datetime import datetime, timedelta, timezone

import shardid_ids as ids

# The README's quick-start ID: made by shard 1 at 2026-11-22 03:13:48.171 UTC.
README_ID = 4035735874804122625


class FixedVectors(unittest.TestCase):
    def test_decode_default_layout(self):
        self.assertEqual(
            ids.decode(README_ID),
            (datetime(2026, 11, 22, 3, 13, 48, 171000, tzinfo=timezone.utc), 1, 1))

    def test_decode_accepts_decimal_string(self):
        self.assertEqual(ids.decode(str(README_ID)), ids.decode(README_ID))

    def test_decode_epoch_and_last_id(self):
        t, shard, seq = ids.decode(0)
        self.assertEqual((t.isoformat(timespec="milliseconds"), shard, seq),
                         ("2011-08-24T21:07:01.721+00:00", 0, 0))
        t, shard, seq = ids.decode((1 << 63) - 1)
        self.assertEqual((t.isoformat(timespec="milliseconds"), shard, seq),
                         ("2046-06-27T17:00:49.496+00:00", 8191, 1023))

    def test_decode_configured_layout(self):
        # epoch 2024-01-01, 12 shard bits, 11 seq bits
        epoch = 1704067200000
        id = (5000 << 23) | (4095 << 11) | 2047
        t, shard, seq = ids.decode(id, epoch_ms=epoch, shard_bits=12, seq_bits=11)
        self.assertEqual((t.isoformat(timespec="milliseconds"), shard, seq),
                         ("2024-01-01T00:00:05.000+00:00", 4095, 2047))

    def test_decode_refuses(self):
        for bad in (-1, 1 << 63, "-1", "12a", "", " 1", "\u0661"):
            with self.assertRaises(ValueError, msg=repr(bad)):
                ids.decode(bad)
        for bad in (1.0, None, True, b"1"):
            with self.assertRaises(TypeError, msg=repr(bad)):
                ids.decode(bad)
        with self.assertRaises(ValueError):
            ids.decode(1, shard_bits=32)
        with self.assertRaises(ValueError):
            ids.decode(1, shard_bits=20, seq_bits=9)   # 34 time bits
        with self.assertRaises(ValueError):
            ids.decode(1, epoch_ms=-1)

    def test_layout_arguments_are_ints(self):
        # bool is an int subclass: True/False passed as 1/0 before
        for kw in (dict(shard_bits=True), dict(seq_bits=False), dict(epoch_ms=True),
                   dict(shard_bits=13.0), dict(seq_bits="10"), dict(epoch_ms=1314220021721.0),
                   dict(shard_bits=None)):
            with self.subTest(kw=kw):
                with self.assertRaises(TypeError):
                    ids.decode(README_ID, **kw)
                with self.assertRaises(TypeError):
                    ids.time_to_id(datetime(2020, 1, 1, tzinfo=timezone.utc), **kw)

    def test_time_to_id(self):
        t, _, _ = ids.decode(README_ID)
        self.assertEqual(ids.time_to_id(t), README_ID >> 23 << 23)
        with self.assertRaises(ValueError):
            ids.time_to_id(datetime(2011, 1, 1, tzinfo=timezone.utc))
        with self.assertRaises(TypeError):
            ids.time_to_id(datetime(2020, 1, 1))

    def test_shortcodes(self):
        for id, code in ((0, "A"), (1, "B"), (63, "_"), (64, "BA"),
                         (README_ID, "DgB0GVZAAQB"), ((1 << 63) - 1, "H__________")):
            self.assertEqual(ids.to_shortcode(id), code)
            self.assertEqual(ids.from_shortcode(code), id)
        self.assertEqual(ids.to_shortcode(str(README_ID)), "DgB0GVZAAQB")

    def test_shortcode_refuses(self):
        for bad in ("", "AB", "a!b", "I__________", "BAAAAAAAAAAA", "DgB0GVZAAQB "):
            with self.assertRaises(ValueError, msg=repr(bad)):
                ids.from_shortcode(bad)
        with self.assertRaises(ValueError):
            ids.to_shortcode(-5)

    def test_shortcode_long_input_is_linear(self):
        # 300,000 digits took 10.7 s (the value was built before its range
        # was checked); the server refuses it in a fraction of a second.
        for code, why in (("B" * 300_000, "out of range"), ("A" * 300_000, "leading zero"),
                          ("B" * 300_000 + "!", "invalid character")):
            start = time.monotonic()
            with self.assertRaisesRegex(ValueError, why):
                ids.from_shortcode(code)
            self.assertLess(time.monotonic() - start, 0.5, why)
        # the server's order: a bad character is reported before the length
        with self.assertRaisesRegex(ValueError, "invalid character '!' .* at position 13"):
            ids.from_shortcode("BAAAAAAAAAAA!")
        with self.assertRaisesRegex(ValueError, "out of range"):
            ids.from_shortcode("BAAAAAAAAAAA")   # 12 digits: 2^66
        self.assertEqual(ids.from_shortcode("H__________"), (1 << 63) - 1)


@unittest.skipUnless(os.environ.get("SHARDID_FIXTURE"), "SHARDID_FIXTURE not set")
class ServerFixture(unittest.TestCase):
    """IDs, decodes and short codes made by PostgreSQL (test/tap/clients.pl)."""

    @classmethod
    def setUpClass(cls):
        with open(os.environ["SHARDID_FIXTURE"], encoding="utf-8") as f:
            cls.fixture = json.load(f)

    def test_fixture_has_big_ids_and_two_layouts(self):
        layouts = self.fixture["layouts"]
        self.assertGreaterEqual(len(layouts), 2)
        for layout in layouts:
            self.assertTrue(any(int(r["id"]) > 2**53 for r in layout["ids"]), layout["name"])

    def test_decode_matches_server(self):
        for layout in self.fixture["layouts"]:
            kw = dict(epoch_ms=layout["epoch_ms"], shard_bits=layout["shard_bits"],
                      seq_bits=layout["seq_bits"])
            for r in layout["ids"]:
                with self.subTest(layout=layout["name"], id=r["id"]):
                    t, shard, seq = ids.decode(r["id"], **kw)
                    unix_ms = (t - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(milliseconds=1)
                    self.assertEqual(unix_ms, r["unix_ms"])
                    self.assertEqual((shard, seq), (r["shard"], r["seq"]))
                    self.assertEqual(ids.time_to_id(t, **kw), int(r["time_to_id"]))

    def test_shortcodes_match_server(self):
        for layout in self.fixture["layouts"]:
            for r in layout["ids"]:
                with self.subTest(id=r["id"]):
                    self.assertEqual(ids.to_shortcode(int(r["id"])), r["code"])
                    self.assertEqual(ids.from_shortcode(r["code"]), int(r["id"]))

    def test_codes_the_server_refuses(self):
        self.assertTrue(self.fixture["bad_codes"])
        for code in self.fixture["bad_codes"]:
            with self.subTest(code=code), self.assertRaises(ValueError):
                ids.from_shortcode(code)


if __name__ == "__main__":
    unittest.main()
