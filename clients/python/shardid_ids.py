"""shardid_ids — decode shardid IDs and short codes in Python, without a database.

A copy of this one file is enough: it needs only the standard library.
It mirrors the server's shardid.id_decode(), to_shortcode() and
from_shortcode(); pass the layout of your database if it is not
Instagram's default (see shardid.layout()).

    >>> decode(4035735874804122625)
    (datetime.datetime(2026, 11, 22, 3, 13, 48, 171000, tzinfo=datetime.timezone.utc), 1, 1)
    >>> to_shortcode(4035735874804122625)
    'DgB0GVZAAQB'
    >>> from_shortcode('DgB0GVZAAQB')
    4035735874804122625
"""

from datetime import datetime, timedelta, timezone

__all__ = ["decode", "time_to_id", "to_shortcode", "from_shortcode",
           "DEFAULT_EPOCH_MS", "ALPHABET"]
__version__ = "0.5.0"

#: Instagram's epoch, 2011-08-24 21:07:01.721 UTC, in Unix milliseconds.
DEFAULT_EPOCH_MS = 1314220021721
#: The short code digits, value 0 to 63.
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

_MAX_ID = (1 << 63) - 1
_MAX_EPOCH_MS = 253402300799999  # 9999-12-31 23:59:59.999 UTC
_UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_DIGIT = {c: i for i, c in enumerate(ALPHABET)}
_MAX_CODE_LEN = 11  # 'H__________' is 2^63 - 1


def _check_layout(epoch_ms, shard_bits, seq_bits):
    for name, value in (("epoch_ms", epoch_ms), ("shard_bits", shard_bits), ("seq_bits", seq_bits)):
        # bool is an int subclass: True would pass as 1
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} is an int, not {type(value).__name__}")
    for name, bits in (("shard_bits", shard_bits), ("seq_bits", seq_bits)):
        if not 0 <= bits <= 31:
            raise ValueError(f"{name} {bits!r} is out of range: 0..31")
    if 63 - shard_bits - seq_bits < 35:
        raise ValueError(f"shard_bits + seq_bits = {shard_bits + seq_bits} "
                         "leaves less than 35 bits for time")
    if not 0 <= epoch_ms <= _MAX_EPOCH_MS:
        raise ValueError(f"epoch_ms {epoch_ms!r} is out of range: 1970..9999")


def _as_id(id):
    """An ID as an int; accepts int or decimal str (IDs travel as strings in JSON)."""
    if isinstance(id, bool) or not isinstance(id, (int, str)):
        raise TypeError(f"an ID is an int or a decimal string, not {type(id).__name__}")
    if isinstance(id, str):
        if not id.isascii() or not id.isdigit():
            raise ValueError(f"invalid ID {id!r}: expected decimal digits")
        id = int(id)
    if not 0 <= id <= _MAX_ID:
        raise ValueError(f"ID {id} is out of range: 0..9223372036854775807")
    return id


def decode(id, epoch_ms=DEFAULT_EPOCH_MS, shard_bits=13, seq_bits=10):
    """(time as an aware UTC datetime, shard, seq) of an ID, like shardid.id_decode()."""
    _check_layout(epoch_ms, shard_bits, seq_bits)
    id = _as_id(id)
    unix_ms = epoch_ms + (id >> (shard_bits + seq_bits))
    try:
        time = _UNIX_EPOCH + timedelta(milliseconds=unix_ms)
    except OverflowError:
        raise ValueError(f"ID {id} decodes to a time past year 9999") from None
    shard = (id >> seq_bits) & ((1 << shard_bits) - 1)
    seq = id & ((1 << seq_bits) - 1)
    return time, shard, seq


def time_to_id(time, epoch_ms=DEFAULT_EPOCH_MS, shard_bits=13, seq_bits=10):
    """The smallest ID of an aware datetime's millisecond, like shardid.time_to_id()."""
    _check_layout(epoch_ms, shard_bits, seq_bits)
    if not isinstance(time, datetime) or time.tzinfo is None:
        raise TypeError("time must be a datetime with a tzinfo")
    unix_ms = (time - _UNIX_EPOCH) // timedelta(milliseconds=1)
    offset = unix_ms - epoch_ms
    if not 0 <= offset < (1 << (63 - shard_bits - seq_bits)):
        raise ValueError(f"{time.isoformat()} is outside the layout's time range")
    return offset << (shard_bits + seq_bits)


def to_shortcode(id):
    """The URL-safe short code of an ID, like shardid.to_shortcode()."""
    id = _as_id(id)
    digits = []
    while True:
        digits.append(ALPHABET[id & 63])
        id >>= 6
        if id == 0:
            return "".join(reversed(digits))


def _shown(code):
    """A code as error messages show it: at most 24 characters of it."""
    return repr(code) if len(code) <= 24 else f"{code[:20]!r}... ({len(code)} characters)"


def from_shortcode(code):
    """The ID of a short code, like shardid.from_shortcode(); ValueError if not canonical.

    Linear in the length of the code, checks in the server's order: empty,
    a character outside the alphabet, a leading zero digit, then more than
    63 bits (any canonical code longer than 11 digits), before any arithmetic.
    """
    if not isinstance(code, str):
        raise TypeError(f"a short code is a str, not {type(code).__name__}")
    if code == "":
        raise ValueError("short code is empty")
    for pos, c in enumerate(code, 1):
        if c not in _DIGIT:
            raise ValueError(f"invalid character {c!r} in short code {_shown(code)} at position {pos}")
    if len(code) > 1 and code[0] == "A":
        raise ValueError(f"short code {_shown(code)} has a leading zero digit 'A'")
    if len(code) > _MAX_CODE_LEN:
        raise ValueError(f"short code {_shown(code)} is out of range for a 63-bit ID")
    id = 0
    for c in code:
        id = (id << 6) | _DIGIT[c]
    if id > _MAX_ID:
        raise ValueError(f"short code {_shown(code)} is out of range for a 63-bit ID")
    return id
