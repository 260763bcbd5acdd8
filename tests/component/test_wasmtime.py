"""The WebAssembly component from Python, as a Python service would embed it: wasmtime (PyPI).

Runs target/wasm-component/tarry.wasm (scripts/build-component.sh) in the venv that
scripts/setup-component.sh makes: python -m unittest discover -s tests/component.
Time is real here; "never early" is asserted exactly against the host's monotonic clock
(the one the component reads through wasi:clocks), lateness with wide margins.
"""

import json
import re
import subprocess
import sys
import time
import unittest
from pathlib import Path

from wasmtime import Engine, Store, WasiConfig
from wasmtime.component import Component, Linker, Record, ResourceAny, Variant

ROOT = Path(__file__).resolve().parents[2]


def docs_blocks(runner):
    """The code blocks of README.md and docs/ run by `runner`, from scripts/docs/blocks.mjs."""
    out = subprocess.run(
        ["node", str(ROOT / "scripts" / "docs" / "blocks.mjs"), runner],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return json.loads(out.stdout)

WASM = ROOT / "target" / "wasm-component" / "tarry.wasm"
INTERFACE = "tarry:queue/queue@0.1.0"
LATE_MS = 1000  # generous: the machine is shared


class QueueError(Exception):
    """The component's `error` variant: its payload is the message (invalid-argument) or the capacity (full)."""


def ok(value, *ok_types):
    """A WIT `result`, as wasmtime-py lifts it, as the ok value or a raised QueueError.

    wasmtime-py tags a result (Variant 'ok'/'err') only where the two sides could be confused
    (offer: a handle and `full`'s capacity are both ints); elsewhere it hands over the payload.
    """
    if isinstance(value, Variant) and value.tag in ("ok", "err"):
        if value.tag == "err":
            raise QueueError(value.payload)
        return value.payload
    if any(type(value) is t or (t is not int and isinstance(value, t)) for t in ok_types):
        return value
    raise QueueError(value)


class Tarry:
    """One instance of the component in its own store, with its exports looked up by name."""

    def __init__(self):
        engine = Engine()
        self.store = Store(engine)
        self.store.set_wasi(WasiConfig())
        linker = Linker(engine)
        linker.add_wasip2()
        # Compiling validates the whole component (wasmtime refuses an invalid one).
        self.component = Component.from_file(engine, str(WASM))
        self.instance = linker.instantiate(self.store, self.component)
        self.interface = self.instance.get_export_index(self.store, INTERFACE)
        assert self.interface is not None, f"the component exports no {INTERFACE}"

    def func(self, name):
        index = self.instance.get_export_index(self.store, name, self.interface)
        assert index is not None, f"{INTERFACE} has no {name}"
        return self.instance.get_func(self.store, index)

    def queue(self, capacity=None):
        if capacity is None:
            return Queue(self, self.func("[constructor]delay-queue")(self.store))
        return Queue(self, ok(self.func("[static]delay-queue.bounded")(self.store, capacity), ResourceAny))


class Queue:
    """The `delay-queue` resource, its results turned into values or QueueError."""

    def __init__(self, tarry, resource):
        self.tarry, self.resource = tarry, resource

    def _call(self, method, *args):
        return self.tarry.func(f"[method]delay-queue.{method}")(self.tarry.store, self.resource, *args)

    def offer(self, payload, delay_ms):
        return ok(self._call("offer", payload, float(delay_ms)), int)

    def offer_at(self, payload, deadline_ms):
        return ok(self._call("offer-at", payload, float(deadline_ms)), int)

    def take(self, timeout_ms):
        return ok(self._call("take", float(timeout_ms)), type(None), Record)

    def reschedule(self, handle, delay_ms):
        return ok(self._call("reschedule", handle, float(delay_ms)), bool)

    def reschedule_at(self, handle, deadline_ms):
        return ok(self._call("reschedule-at", handle, float(deadline_ms)), bool)

    def __getattr__(self, method):
        # The calls that return no result: now, poll, peek, len, cancel, delay-of, ...
        return lambda *args: self._call(method.replace("_", "-"), *args)


def deadline(item):
    return getattr(item, "deadline-ms")


def since(start_ns):
    """Milliseconds on the host's monotonic clock since `start_ns` (time.monotonic_ns())."""
    return (time.monotonic_ns() - start_ns) / 1e6


class ComponentInWasmtime(unittest.TestCase):
    def setUp(self):
        self.tarry = Tarry()
        self.q = self.tarry.queue()

    def test_exports_the_wit_interface_and_imports_only_wasi(self):
        engine = self.tarry.store.engine
        imports = list(self.tarry.component.type.imports(engine))
        exports = list(self.tarry.component.type.exports(engine))
        self.assertEqual(exports, [INTERFACE])
        self.assertTrue(any(i.startswith("wasi:clocks/monotonic-clock@0.2.") for i in imports), imports)
        self.assertEqual([i for i in imports if not i.startswith("wasi:")], [])

    def test_take_returns_items_in_deadline_order_fifo_among_ties_never_early(self):
        start = time.monotonic_ns()
        base = self.q.now()
        offered = [(b"c", 60), (b"a1", 20), (b"b", 40), (b"a2", 20), (b"a3", 20)]
        for payload, ms in offered:
            self.q.offer_at(payload, base + ms)
        taken = []
        while self.q.len() > 0:
            item = self.q.take(5000)
            # The host's clock, read after take returned, has passed the deadline: never early.
            self.assertGreaterEqual(since(start), deadline(item) - base)
            self.assertLess(since(start), deadline(item) - base + LATE_MS)
            taken.append(item.payload)
        self.assertEqual(taken, [b"a1", b"a2", b"a3", b"b", b"c"])
        # At most one pollable per distinct deadline (fewer when a deadline passed before take
        # was called), plus a new one after each early wake: never a polling loop.
        stats = self.q.stats()
        self.assertLessEqual(stats.wakes - getattr(stats, "early-wakes"), 3)

    def test_take_blocks_until_the_head_is_due(self):
        start = time.monotonic_ns()
        self.q.offer(b"later", 250)
        self.q.offer(b"soon", 80)
        item = self.q.take(5000)
        waited = since(start)
        self.assertEqual(item.payload, b"soon")
        self.assertGreaterEqual(waited, 80)
        self.assertLess(waited, 80 + LATE_MS)
        self.assertEqual(self.q.len(), 1)

    def test_take_returns_none_at_its_timeout_and_keeps_the_item(self):
        h = self.q.offer(b"not yet", 60_000)
        start = time.monotonic_ns()
        self.assertIsNone(self.q.take(50))
        waited = since(start)
        self.assertGreaterEqual(waited, 50)
        self.assertLess(waited, 50 + LATE_MS)
        self.assertEqual(self.q.len(), 1)
        self.assertEqual(self.q.peek().handle, h)
        start = time.monotonic_ns()
        self.assertIsNone(self.tarry.queue().take(30))  # an empty queue sleeps out the timeout
        self.assertGreaterEqual(since(start), 30)

    def test_cancel_and_reschedule_by_handle_stale_handles_name_nothing(self):
        a = self.q.offer(b"a", -1)
        b = self.q.offer(b"b", 0)
        c = self.q.offer(b"c", 60_000)
        self.assertEqual(self.q.cancel(a), b"a")
        self.assertIsNone(self.q.cancel(a))
        self.assertIs(self.q.reschedule(a, 0), False)
        self.assertIsNone(self.q.delay_of(a))
        d = self.q.offer(b"d", 0)  # reuses a's slot under a new handle
        self.assertNotEqual(d, a)
        self.assertIsNone(self.q.cancel(a))
        self.assertIsNone(self.q.cancel(2**64 - 1))
        # c moves to the front; b, moved onto the deadline d already has, queues behind d.
        base = self.q.now()
        self.assertIs(self.q.reschedule_at(c, base - 1000), True)
        self.assertIs(self.q.reschedule_at(d, base - 500), True)
        self.assertIs(self.q.reschedule_at(b, base - 500), True)
        self.assertEqual([i.payload for i in self.q.drain_expired(10)], [b"c", b"d", b"b"])
        self.assertEqual(self.q.len(), 0)

    def test_poll_peek_next_deadline_drain_and_clear(self):
        self.assertIsNone(self.q.poll())
        self.assertIsNone(self.q.next_deadline())
        for i in range(5):
            self.q.offer(bytes([i]), -5 + i)
        late = self.q.offer(b"late", 60_000)
        self.assertEqual(self.q.peek().payload, b"\x00")
        self.assertEqual(self.q.poll().payload, b"\x00")
        self.assertEqual([i.payload for i in self.q.drain_expired(2)], [b"\x01", b"\x02"])
        self.assertEqual(self.q.len(), 3)
        delay = self.q.delay_of(late)
        self.assertTrue(50_000 < delay <= 60_000, delay)
        self.assertAlmostEqual(self.q.next_deadline(), deadline(self.q.peek()))
        self.q.clear()
        self.assertEqual((self.q.len(), self.q.cancel(late), self.q.peek()), (0, None, None))

    def test_payloads_are_bytes_kept_exactly(self):
        payloads = [b"", bytes(range(256)), b"\x00" * 100_000]
        for p in payloads:
            self.q.offer(p, -1)
        self.assertEqual([i.payload for i in self.q.drain_expired(10)], payloads)

    def test_bad_input_is_an_error_variant_that_names_the_argument_and_changes_nothing(self):
        h = self.q.offer(b"kept", 60_000)
        cases = [
            (lambda: self.q.offer(b"x", float("nan")), "delay-ms must be a finite number of milliseconds, got NaN"),
            (lambda: self.q.offer(b"x", float("inf")), "delay-ms must be a finite number of milliseconds, got Infinity"),
            (lambda: self.q.offer_at(b"x", float("-inf")), "deadline-ms must be a finite number"),
            (lambda: self.q.reschedule(h, float("nan")), "delay-ms must be a finite number"),
            (lambda: self.q.reschedule_at(h, float("inf")), "deadline-ms must be a finite number"),
            (lambda: self.q.take(-1), "timeout-ms must not be negative"),
            (lambda: self.q.take(float("nan")), "timeout-ms must be a number of milliseconds, got NaN"),
            (lambda: self.tarry.queue().take(float("inf")), "timeout-ms is infinite and the queue is empty"),
            (lambda: self.tarry.queue(0), "capacity must be between 1 and 2147483647, got 0"),
        ]
        for call, message in cases:
            with self.assertRaises(QueueError) as caught:
                call()
            self.assertIsInstance(caught.exception.args[0], str)
            self.assertTrue(caught.exception.args[0].startswith(message), caught.exception.args[0])
        self.assertEqual(self.q.len(), 1)
        self.assertTrue(50_000 < self.q.delay_of(h) <= 60_000)
        # The instance still works after every refusal: nothing trapped.
        self.assertEqual(self.q.cancel(h), b"kept")

    def test_a_bounded_queue_refuses_with_full(self):
        q = self.tarry.queue(2)
        q.offer(b"a", 0)
        q.offer(b"b", 0)
        with self.assertRaises(QueueError) as caught:
            q.offer(b"c", 0)
        self.assertEqual(caught.exception.args[0], 2)
        self.assertEqual(q.len(), 2)

    def test_docs_wit_blocks_list_the_functions_of_wit_tarry_wit(self):
        blocks = docs_blocks("wit")
        self.assertGreaterEqual(len(blocks), 1, "the docs have no ```wit wit block")

        def funcs(text):
            return [line.strip() for line in text.splitlines() if re.search(r"\b(func|constructor)\(", line)]

        wit = funcs((ROOT / "wit" / "tarry.wit").read_text())
        self.assertEqual(len(wit), 17)
        for block in blocks:
            with self.subTest(block["where"]):
                self.assertEqual(funcs(block["code"]), wit)

    def test_docs_python_blocks_run_as_written(self):
        blocks = docs_blocks("component")
        self.assertGreaterEqual(len(blocks), 1, "the docs have no ```python component block")
        for block in blocks:
            with self.subTest(block["where"]):
                run = subprocess.run(
                    [sys.executable, "-c", block["code"]], cwd=ROOT, capture_output=True, text=True, timeout=60
                )
                self.assertEqual(run.returncode, 0, f"{block['where']}: {run.stderr}")
                if "output" in block:
                    self.assertEqual(run.stdout, block["output"], block["where"])

if __name__ == "__main__":
    unittest.main()
