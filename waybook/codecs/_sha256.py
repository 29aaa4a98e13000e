"""SHA-256 stopped at a block boundary and resumed: what lets a record's digest outlive its content.

SHA-256 (FIPS 180-4) reads its input in 64-byte blocks, carrying eight 32-bit words (the *state*) from
one block to the next; the digest is the state after the last block, which holds the input's length.
So when the first `64 * n` bytes of an input are set aside, the state after them and `n` are all it
takes to finish the same digest over the rest: `resume(state_after(prefix), len(prefix), rest)` equals
`hashlib.sha256(prefix + rest).hexdigest()`. hashlib hides its state, hence this module. It runs only
where content is being erased or was erased (docs/erasure.md), never on the path of an ordinary append
or proof: through OpenSSL's SHA-256 functions (`SHA256_Init/Update/Final` on a `SHA256_CTX` it lays
out, via ctypes) when the process can load libcrypto and they pass a known-answer test on first use,
else through the plain-Python compression function below (about a hundred times slower, the same bits).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import struct
import threading
from collections.abc import Callable
from typing import Final

BLOCK: Final = 64
"""Bytes per SHA-256 block."""

_IV: Final = (
    0x6A09E667,
    0xBB67AE85,
    0x3C6EF372,
    0xA54FF53A,
    0x510E527F,
    0x9B05688C,
    0x1F83D9AB,
    0x5BE0CD19,
)
_K: Final = (
    0x428A2F98, 0x71374491, 0xB5C0FBCF, 0xE9B5DBA5, 0x3956C25B, 0x59F111F1, 0x923F82A4, 0xAB1C5ED5,
    0xD807AA98, 0x12835B01, 0x243185BE, 0x550C7DC3, 0x72BE5D74, 0x80DEB1FE, 0x9BDC06A7, 0xC19BF174,
    0xE49B69C1, 0xEFBE4786, 0x0FC19DC6, 0x240CA1CC, 0x2DE92C6F, 0x4A7484AA, 0x5CB0A9DC, 0x76F988DA,
    0x983E5152, 0xA831C66D, 0xB00327C8, 0xBF597FC7, 0xC6E00BF3, 0xD5A79147, 0x06CA6351, 0x14292967,
    0x27B70A85, 0x2E1B2138, 0x4D2C6DFC, 0x53380D13, 0x650A7354, 0x766A0ABB, 0x81C2C92E, 0x92722C85,
    0xA2BFE8A1, 0xA81A664B, 0xC24B8B70, 0xC76C51A3, 0xD192E819, 0xD6990624, 0xF40E3585, 0x106AA070,
    0x19A4C116, 0x1E376C08, 0x2748774C, 0x34B0BCB5, 0x391C0CB3, 0x4ED8AA4A, 0x5B9CCA4F, 0x682E6FF3,
    0x748F82EE, 0x78A5636F, 0x84C87814, 0x8CC70208, 0x90BEFFFA, 0xA4506CEB, 0xBEF9A3F7, 0xC67178F2,
)  # fmt: skip
_MASK: Final = 0xFFFFFFFF
_WORDS: Final = struct.Struct(">16I")
_STATE: Final = struct.Struct(">8I")


def _compress(state: tuple[int, ...], block: bytes | memoryview) -> tuple[int, ...]:
    """One application of SHA-256's compression function to a 64-byte block."""
    w = list(_WORDS.unpack(block))
    mask = _MASK
    for t in range(16, 64):
        x, y = w[t - 15], w[t - 2]
        s0 = ((x >> 7 | x << 25) ^ (x >> 18 | x << 14) ^ (x >> 3)) & mask
        s1 = ((y >> 17 | y << 15) ^ (y >> 19 | y << 13) ^ (y >> 10)) & mask
        w.append((w[t - 16] + s0 + w[t - 7] + s1) & mask)
    a, b, c, d, e, f, g, h = state
    for k, wt in zip(_K, w, strict=True):
        s1 = ((e >> 6 | e << 26) ^ (e >> 11 | e << 21) ^ (e >> 25 | e << 7)) & mask
        t1 = h + s1 + ((e & f) ^ (~e & g)) + k + wt
        s0 = ((a >> 2 | a << 30) ^ (a >> 13 | a << 19) ^ (a >> 22 | a << 10)) & mask
        t2 = s0 + ((a & b) ^ (a & c) ^ (b & c))
        h, g, f, e, d, c, b, a = g, f, e, (d + t1) & mask, c, b, a, (t1 + t2) & mask
    return tuple((x + y) & mask for x, y in zip(state, (a, b, c, d, e, f, g, h), strict=True))


def _python_state(prefix: bytes | memoryview) -> str:
    """The SHA-256 state (64 hex digits) after `prefix`, whose length must be a multiple of 64 bytes."""
    view = memoryview(prefix)
    state: tuple[int, ...] = _IV
    for start in range(0, len(view), BLOCK):
        state = _compress(state, view[start : start + BLOCK])
    return _STATE.pack(*state).hex()


def _python_resume(state: str, done: int, rest: bytes | memoryview) -> str:
    words = _STATE.unpack(bytes.fromhex(state))
    length = done + len(rest)
    tail = bytes(rest) + b"\x80" + b"\x00" * ((55 - length) % BLOCK) + (length * 8).to_bytes(8, "big")
    for start in range(0, len(tail), BLOCK):
        words = _compress(words, tail[start : start + BLOCK])
    return _STATE.pack(*words).hex()


# --- OpenSSL, through ctypes ----------------------------------------------------------------------------


class _Context(ctypes.Structure):
    """OpenSSL's `SHA256_CTX` (openssl/sha.h, unchanged since 0.9.8): the state words, the bit count
    split in two words, a partial block, how much of it is used, the digest length."""

    _fields_ = (
        ("h", ctypes.c_uint32 * 8),
        ("Nl", ctypes.c_uint32),
        ("Nh", ctypes.c_uint32),
        ("data", ctypes.c_uint32 * 16),
        ("num", ctypes.c_uint),
        ("md_len", ctypes.c_uint),
    )


class _OpenSsl:
    def __init__(self, lib: ctypes.CDLL) -> None:
        context = ctypes.POINTER(_Context)
        self._init = lib.SHA256_Init
        self._init.argtypes = (context,)
        self._update = lib.SHA256_Update
        self._update.argtypes = (context, ctypes.c_char_p, ctypes.c_size_t)
        self._final = lib.SHA256_Final
        self._final.argtypes = (ctypes.c_char_p, context)

    def state(self, prefix: bytes | memoryview) -> str:
        context = _Context()
        self._init(ctypes.byref(context))
        data = bytes(prefix)
        self._update(ctypes.byref(context), data, len(data))
        return _STATE.pack(*context.h).hex()

    def resume(self, state: str, done: int, rest: bytes | memoryview) -> str:
        context = _Context()
        self._init(ctypes.byref(context))
        context.h[:] = _STATE.unpack(bytes.fromhex(state))
        bits = done * 8
        context.Nl, context.Nh, context.num = bits & _MASK, bits >> 32, 0
        data = bytes(rest)
        self._update(ctypes.byref(context), data, len(data))
        out = ctypes.create_string_buffer(32)
        self._final(out, ctypes.byref(context))
        return out.raw.hex()


_Backend = tuple[Callable[[bytes | memoryview], str], Callable[[str, int, bytes | memoryview], str]]
_backend: _Backend | None = None
_choosing = threading.Lock()


def _choose() -> _Backend:
    """OpenSSL's functions if they load and agree with hashlib on a known answer, else plain Python."""
    global _backend
    with _choosing:
        if _backend is None:
            _backend = (_python_state, _python_resume)
            name = ctypes.util.find_library("crypto")
            try:
                openssl = _OpenSsl(ctypes.CDLL(name)) if name else None
            except (OSError, AttributeError):
                openssl = None
            if openssl is not None:
                prefix, rest = bytes(range(128)), b"waybook" * 31
                expected = hashlib.sha256(prefix + rest).hexdigest()
                state = openssl.state(prefix)
                if state == _python_state(prefix) and openssl.resume(state, len(prefix), rest) == expected:
                    _backend = (openssl.state, openssl.resume)
        return _backend


def state_after(prefix: bytes | memoryview) -> str:
    """The SHA-256 state (64 hex digits) after `prefix`, whose length must be a multiple of 64 bytes."""
    if len(prefix) % BLOCK:
        msg = f"a state is only defined at a block boundary; {len(prefix)} bytes is not a multiple of 64"
        raise ValueError(msg)
    return (_backend or _choose())[0](prefix)


def resume(state: str, done: int, rest: bytes | memoryview) -> str:
    """The SHA-256 digest (64 hex digits) of an input whose first `done` bytes (a multiple of 64) left
    `state` (`state_after`), and whose remaining bytes are `rest`."""
    if done % BLOCK or done < 0:
        msg = f"{done} bytes is not a block boundary (a multiple of 64)"
        raise ValueError(msg)
    return (_backend or _choose())[1](state, done, rest)
